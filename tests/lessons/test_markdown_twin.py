from __future__ import annotations

import re

import pytest
import yaml

from lessons.models import Lesson
from tests.conftest import SEED_PATH
from tests.factories import make_lesson

SITE = "http://127.0.0.1:8000"
BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8"


def twin(client, path=SEED_PATH + ".md", **headers):
    response = client.get(path, headers=headers)
    assert response.status_code == 200
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    assert "Accept" in response["Vary"]
    return response.content.decode()


def front_matter(text: str) -> dict:
    match = re.match(r"^---\n(.*?)\n---\n", text, re.S)
    assert match, text[:200]
    return yaml.safe_load(match.group(1))


def test_the_seed_twin_has_front_matter_like_the_seeds(client, demo):
    meta = front_matter(twin(client))
    assert meta["title"] == demo.title
    assert meta["description"] == demo.summary
    assert meta["canonical"] == SITE + SEED_PATH
    assert meta["source"] == SITE + SEED_PATH + ".md"
    assert str(meta["retrieved"]) == demo.updated_at.date().isoformat()


def test_the_seed_twin_has_every_section_in_order(client, demo):
    text = twin(client)
    sections = [
        "> **Agent view.** This is the Markdown twin of the page, for tools and assistants.",
        f"{SITE}/agent-instructions.md",
        f"{SITE}/openapi.json",
        f"{SITE}/.well-known/ai-catalog.json",
        f"# {demo.title}\n\n{demo.summary}",
        "Subject: Computing · Area: Machine Learning · Ages 23 to 24",
        f"Page: {SITE}{SEED_PATH}",
        "## Ready when they can",
        f"## Lesson: {demo.heading}",
        "**Example.**",
        "| Time slot | Stage A | Stage B |\n| --- | --- | --- |\n| 1 | A1 | idle |",
        "**Tip.**",
        "**Recap.**",
        "## Practice",
        "### Question 1",
        "### Question 8",
        "### Answer key",
        "## Needs first",
        "## Opens up",
    ]
    positions = [text.find(section) for section in sections]
    assert -1 not in positions, [s for s, p in zip(sections, positions, strict=True) if p == -1]
    assert positions == sorted(positions)
    for objective in demo.objective_list:
        assert f"- {objective}\n" in text


def test_the_twin_lists_every_question_with_choices_and_an_answer_key(client, demo):
    text = twin(client)
    for question in demo.questions.all():
        assert question.prompt in text
        for choice in question.labelled_choices:
            assert f"- **{choice['letter']}.** {choice['text']}" in text
        letters = ", ".join(question.correct_letters)
        assert f"#### Question {question.position}: {letters}" in text


def test_neighbours_are_links_to_their_twins(client, demo):
    text = twin(client)
    needs = text[text.find("## Needs first") : text.find("## Opens up")]
    opens = text[text.find("## Opens up") :]
    assert (
        f"- [Message Passing and Asynchronous Work]({SITE}/learn/computing/"
        "message-passing-and-asynchronous-work-mt_twcpO-945r.md)" in needs
    )
    assert "mt_Nv1-WLGIO4.md)" in opens


def test_the_twin_is_pure_markdown_even_when_a_lesson_holds_html(client, db):
    lesson = make_lesson(body="Careful: <script>alert(1)</script> and <b>bold</b>")
    text = twin(client, lesson.get_absolute_url() + ".md")
    assert not re.search(r"<[a-zA-Z/]", text.replace("\\<", ""))
    assert "\\<script>" in text


@pytest.mark.parametrize(
    ("accept", "markdown"),
    [
        ("text/markdown", True),
        ("text/markdown;q=0.9, text/html;q=0.8", True),
        ("text/html;q=0.9, text/markdown;q=0.5", False),
        ("text/markdown;q=0.5, text/html", False),
        (BROWSER_ACCEPT, False),
        ("*/*", False),
        ("application/json", False),
    ],
)
def test_content_negotiation_honours_q_values(client, demo, accept, markdown):
    response = client.get(SEED_PATH, headers={"Accept": accept})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/markdown" if markdown else "text/html")
    assert "Accept" in response["Vary"]


def test_mode_agent_gets_the_twin(client, demo):
    assert twin(client, SEED_PATH + "?mode=agent").startswith("---\n")


def test_a_wrong_slug_twin_redirects_to_the_canonical_twin(client, demo):
    response = client.get("/learn/computing/old-mt__e-JwIxHek.md")
    assert response.status_code == 301
    assert response["Location"] == SEED_PATH + ".md"


def test_the_html_page_points_at_its_twin(client, demo):
    html = client.get(SEED_PATH).content.decode()
    assert f'<link rel="alternate" type="text/markdown" href="{SITE}{SEED_PATH}.md"' in html


def test_home_and_subject_pages_have_twins(client, demo):
    home = twin(client, "/index.md")
    assert home.startswith("---\n") and "# LightMySky" in home
    assert f"({SITE}{SEED_PATH}.md)" in home
    subject = twin(client, "/learn/computing.md")
    assert "# Computing" in subject and "## Machine Learning" in subject
    assert client.get("/", headers={"Accept": "text/markdown"})["Content-Type"].startswith(
        "text/markdown"
    )


def test_a_draft_has_no_public_twin(client, db):
    draft = make_lesson(status=Lesson.Status.DRAFT)
    assert client.get(draft.get_absolute_url() + ".md").status_code == 404


def test_lesson_pages_carry_learning_resource_data_with_the_quiz(client, demo):
    import json

    html = client.get(SEED_PATH).content.decode()
    raw = re.search(r'<script type="application/ld\+json">(.*?)</script>', html, re.S).group(1)
    data = json.loads(raw)
    assert data["@type"] == "LearningResource"
    assert data["educationalLevel"] == "Ages 23 to 24"
    assert data["teaches"] == demo.objective_list
    assert data["hasPart"]["@type"] == "Quiz"
    assert len(data["hasPart"]["hasPart"]) == 8


def test_structured_data_cannot_break_out_of_its_script(client, db):
    lesson = make_lesson(title="</script><script>alert(1)</script>")
    html = client.get(lesson.get_absolute_url()).content.decode()
    assert "</script><script>alert(1)" not in html
