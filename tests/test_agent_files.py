"""The files an agent starts from: llms.txt and its family, the sitemap, the catalog."""

from __future__ import annotations

import re
from xml.etree import ElementTree

from django.test import Client

from lessons.models import Lesson
from tests.conftest import SEED_PATH
from tests.factories import make_lesson
from tests.practice.helpers import answer, exported

SITE = "http://127.0.0.1:8000"
LINK_LINE = re.compile(r"^- \[[^\]]+\]\((?P<url>[^)]+)\)(: .+)?$")


def local(url: str) -> str:
    assert url.startswith(SITE), url
    return url.removeprefix(SITE)


def test_llms_txt_follows_the_format(client, demo):
    make_lesson(title="Secret draft", slug="secret", status=Lesson.Status.DRAFT)
    response = client.get("/llms.txt")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    lines = response.content.decode().splitlines()
    assert lines[0] == "# LightMySky"
    assert sum(1 for line in lines if line.startswith("# ")) == 1
    assert lines[1] == "" and lines[2].startswith("> ")
    sections: dict[str, list[str]] = {}
    current = None
    for line in lines[3:]:
        if line.startswith("## "):
            current = line[3:]
            sections[current] = []
        elif current and line.strip():
            assert LINK_LINE.match(line), f"not a link line under {current}: {line}"
            sections[current].append(line)
    assert list(sections) == ["Computing", "Optional"]
    assert len(sections["Computing"]) == 3
    assert "Secret draft" not in response.content.decode()
    seed_line = next(line for line in sections["Computing"] if "mt__e-JwIxHek" in line)
    assert seed_line.startswith(f"- [{Lesson.objects.get(public_id='mt__e-JwIxHek').title}]")


def test_every_link_in_llms_txt_answers(client, demo):
    for line in client.get("/llms.txt").content.decode().splitlines():
        if match := LINK_LINE.match(line):
            url = match["url"]
            response = client.get(local(url))
            assert response.status_code == 200, url
            if url.endswith((".md", ".txt")):
                assert response["Content-Type"] == "text/markdown; charset=utf-8", url


def test_every_address_the_seed_twin_names_answers(client, demo):
    text = client.get(SEED_PATH + ".md").content.decode()
    urls = set(re.findall(r"https?://[^\s)`]+", text))
    assert len(urls) >= 10
    for url in urls:
        path = local(url)
        if "{" in path:  # the documented API template
            continue
        response = client.get(path)
        assert response.status_code == 200, url


def test_llms_full_txt_holds_every_published_twin(client, demo):
    make_lesson(title="Secret draft", slug="secret", status=Lesson.Status.DRAFT)
    text = client.get("/llms-full.txt").content.decode()
    for lesson in Lesson.objects.published():
        assert f"# {lesson.title}\n" in text
    assert "Secret draft" not in text
    assert text.count("\n### Answer key\n") == 3


def test_the_ai_catalog_lists_every_machine_readable_file(client, demo):
    document = client.get("/.well-known/ai-catalog.json").json()
    files = {entry["url"]: entry for entry in document["files"]}
    for path in (
        "/llms.txt",
        "/llms-full.txt",
        "/openapi.json",
        "/agent-instructions.md",
        "/auth.md",
        "/pricing.md",
        "/sitemap.xml",
        "/search.md",
        "/sky/words.md",
        SEED_PATH + ".md",
    ):
        assert SITE + path in files, path
    for url, entry in files.items():
        assert entry["media_type"] and entry["description"]
        response = client.get(local(url))
        assert response.status_code == 200, url
        assert response["Content-Type"].startswith(entry["media_type"]), url


def test_agent_instructions_give_the_call_for_each_job(client, demo):
    text = client.get("/agent-instructions.md").content.decode()
    for job in (
        "### Find a lesson",
        "### Read a lesson",
        "### Get its questions",
        "### Check a learner's answer",
    ):
        assert job in text
    assert f"POST {SITE}/api/v1/lessons/{{id}}/questions/{{number}}/check" in text


def test_agent_instructions_name_every_field_of_a_progress_file(client, demo):
    learner = Client()
    answer(learner, demo, right=True)
    document = exported(learner)
    item = document["items"][0]
    text = client.get("/agent-instructions.md").content.decode()
    fields = set(document) | set(item) | set(item["reviews"][0])
    assert {f for f in fields if f"`{f}`" not in text} == set()
    # The item's key is one the API lists, so an agent can tell which question it is.
    kind, key = item["item"].split(":")
    questions = client.get(f"/api/v1/lessons/{item['lesson']}/questions").json()
    assert kind == "question" and key in [q["key"] for q in questions]


def test_agents_are_told_that_a_learner_sees_other_letters(client, demo):
    """The learners' walk of 2026-12-06: the twin's "the answer is B" is another letter on the
    learner's screen, where each learner's choices come in an order of their own."""
    twin = client.get(demo.get_absolute_url() + ".md").content.decode()
    instructions = client.get("/agent-instructions.md").content.decode()
    assert "name a choice by its words when you talk with a learner" in twin
    assert "with a learner name a choice by its words, not by its letter" in instructions


def test_auth_and_pricing_say_it_plainly(client, demo):
    auth = client.get("/auth.md").content.decode()
    assert "no API keys" in auth
    assert "LightMySky is free" in client.get("/pricing.md").content.decode()
    # What it says of cookies holds: reading sets none; a page with a form sets csrftoken only.
    assert "Reading lessons, twins and catalog files sets no cookie" in auth
    for path in (SEED_PATH, SEED_PATH + ".md", "/llms.txt", "/api/v1/lessons"):
        assert not client.get(path).cookies, path
    assert set(client.get(SEED_PATH + "/practice").cookies) == {"csrftoken"}


def test_the_sitemap_lists_every_published_page(client, demo):
    make_lesson(title="Secret draft", slug="secret", status=Lesson.Status.DRAFT)
    response = client.get("/sitemap.xml")
    tree = ElementTree.fromstring(response.content)
    namespace = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locations = [loc.text for loc in tree.findall("s:url/s:loc", namespace)]
    expected = {f"{SITE}/", f"{SITE}/learn/computing/"} | {
        SITE + lesson.get_absolute_url() for lesson in Lesson.objects.published()
    }
    assert set(locations) == expected


def test_every_page_names_its_canonical_address(client, demo):
    for path in ("/", "/learn/computing/", SEED_PATH, SEED_PATH + "/worksheet", "/sky"):
        html = client.get(path).content.decode()
        assert f'<link rel="canonical" href="{SITE}{path}">' in html, path


def test_reads_for_agents_are_open_to_other_origins(client, demo):
    for path in ("/llms.txt", "/openapi.json", "/api/v1/subjects", SEED_PATH + ".md"):
        assert client.get(path)["Access-Control-Allow-Origin"] == "*", path
    assert "Access-Control-Allow-Origin" not in client.get(SEED_PATH)
