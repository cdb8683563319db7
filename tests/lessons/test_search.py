"""Finding a lesson by words: the results page, its Markdown twin and the API, on whichever
database the suite runs (CI runs it on SQLite's FTS5 and on PostgreSQL's full-text search)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from lessons import search
from lessons.models import Lesson, Question
from tests.conftest import SEED_ID
from tests.factories import make_lesson, make_question
from tests.practice.helpers import answer

NOT_STARTED = '<span class="muted">not started</span>'


def found(client, words: str, **params) -> list[str]:
    """The titles the results page lists for these words, in order."""
    response = client.get("/search", {"q": words, **params})
    assert response.status_code == 200
    return re.findall(
        r'<li class="search-hit">\s*<h2><a href="[^"]*">([^<]*)</a>', response.content.decode()
    )


def hit_blocks(html: str) -> dict[str, str]:
    """Each listed lesson's title and the HTML of its entry."""
    blocks = re.findall(r'<li class="search-hit">(.*?)</li>', html, re.S)
    return {re.search(r"<h2><a [^>]*>([^<]*)</a>", block)[1]: block for block in blocks}


# ---- Finding the seed lesson, in every form ------------------------------------------------


def test_pipeline_bubble_finds_the_seed_lesson_first(client, demo):
    response = client.get("/search", {"q": "pipeline bubble"})
    html = response.content.decode()
    hits = hit_blocks(html)
    assert list(hits)[0] == demo.title
    seed = hits[demo.title]
    assert f'href="{demo.get_absolute_url()}"' in seed
    assert "Computing · " in seed and demo.summary in seed
    assert "<mark>pipeline</mark> <mark>bubble</mark>" in seed.lower()
    assert 'name="robots" content="noindex"' in html
    # A visitor with no progress sees no state claimed for them.
    assert 'class="lesson-state"' not in html and not response.cookies


@pytest.mark.parametrize("words", ["KV cache", "quantization", "quantisation"])
def test_the_everyday_names_find_the_serving_lesson(client, demo, words):
    """The short name most learners meet, and the American spelling, as well as the lesson's."""
    hits = hit_blocks(client.get("/search", {"q": words}).content.decode())
    assert list(hits)[0].startswith("Serving a Model")


def test_the_markdown_twin_finds_the_seed_lesson_first(client, demo):
    for response in (
        client.get("/search.md", {"q": "pipeline bubble"}),
        client.get("/search", {"q": "pipeline bubble"}, headers={"Accept": "text/markdown"}),
    ):
        assert response.status_code == 200
        assert response["Content-Type"] == "text/markdown; charset=utf-8"
        assert "Accept" in response["Vary"]
        text = response.content.decode()
        first = re.search(r"^1\. \[([^\]]+)\]\(([^)]+)\)", text, re.M)
        assert first and first[1] == demo.title
        assert first[2].endswith(demo.get_markdown_url())
        assert re.search(r"Matched: “.*\*\*pipeline\*\* \*\*bubble\*\*", text, re.I)
        assert text.startswith('---\ntitle: "pipeline bubble"\n')


def test_the_api_finds_the_seed_lesson_first(client, demo):
    response = client.get("/api/v1/search", {"q": "pipeline bubble"})
    assert response.status_code == 200
    body = response.json()
    assert body["count"] >= 1 and body["page"] == 1 and body["message"] == ""
    first = body["results"][0]
    assert first["id"] == SEED_ID and first["subject_name"] == "Computing"
    assert "**pipeline** **bubble**" in first["snippet"].lower()
    assert "<mark>" not in first["snippet"]


def test_the_api_and_the_agent_files_name_search(client, demo):
    paths = client.get("/openapi.json").json()["paths"]
    assert "/api/v1/search" in paths
    assert set(paths["/api/v1/search"]) == {"get"}
    llms = client.get("/llms.txt").content.decode()
    instructions = client.get("/agent-instructions.md").content.decode()
    for text in (llms, instructions):
        assert "/search.md?q=pipeline+bubble" in text and "/api/v1/search?q=" in text


# ---- Ranking and snippets ------------------------------------------------------------------


def test_a_title_match_ranks_above_a_summary_a_body_and_a_question_match(client, db):
    in_question = make_lesson(title="Comets", slug="comets")
    Question.objects.filter(lesson=in_question, position=1).delete()
    make_question(in_question, position=1, prompt="Which nebula glows red?")
    make_lesson(title="Galaxies", slug="galaxies", body="A *nebula* is a cloud of gas.")
    make_lesson(title="Dust", slug="dust", summary="Where a nebula comes from.")
    make_lesson(title="The Nebula", slug="the-nebula", body="Clouds.")
    make_lesson(title="Planets", slug="planets")  # no nebula anywhere
    assert found(client, "nebula") == ["The Nebula", "Dust", "Galaxies", "Comets"]
    # A hit in a question leads to its lesson, and the snippet shows the question.
    blocks = hit_blocks(client.get("/search", {"q": "nebula"}).content.decode())
    assert 'href="' + in_question.get_absolute_url() + '"' in blocks["Comets"]
    assert "Which <mark>nebula</mark> glows red?" in blocks["Comets"]


def test_words_stem_phrases_hold_together_and_minus_leaves_out(client, db):
    make_lesson(title="Red giants", slug="red-giants", body="Old stars swell into giants.")
    make_lesson(title="Star colours", slug="colours", body="Giants are red; dwarfs are white.")
    assert sorted(found(client, "giant")) == ["Red giants", "Star colours"]  # giants → giant
    assert found(client, '"red giants"') == ["Red giants"]
    assert found(client, "giants -dwarfs") == ["Red giants"]
    assert found(client, "giants dwarfs") == ["Star colours"]  # every plain word is required


def test_snippets_are_escaped_then_marked(client, db):
    lesson = make_lesson(title="Markup", slug="markup", questions=0)
    make_question(lesson, position=1, prompt='Is <b onclick="x()">nebula</b> 1 < 2 & bright?')
    html = client.get("/search", {"q": "nebula"}).content.decode()
    block = hit_blocks(html)["Markup"]
    assert "<b onclick" not in html and "<mark>nebula</mark>" in block
    assert "1 &lt; 2 &amp; bright?" in block
    if connection.vendor == "sqlite":  # PostgreSQL's headline leaves tags out altogether
        assert "&lt;b onclick=&quot;x()&quot;&gt;<mark>nebula</mark>&lt;/b&gt;" in block
    api = client.get("/api/v1/search", {"q": "nebula"}).json()["results"][0]["snippet"]
    assert "**nebula**" in api and "\x02" not in api and "\x03" not in api


# ---- The index follows the content ---------------------------------------------------------


def test_drafts_never_appear_and_the_index_follows_publish_edit_unpublish_delete(client, db):
    lesson = make_lesson(title="Quasar light", slug="quasar", status=Lesson.Status.DRAFT)
    assert found(client, "quasar") == []
    lesson.status = Lesson.Status.PUBLISHED
    lesson.save()
    assert found(client, "quasar") == ["Quasar light"]
    lesson.title = "Blazar light"
    lesson.save()
    assert found(client, "quasar") == [] and found(client, "blazar") == ["Blazar light"]
    question = lesson.questions.get(position=3)
    question.prompt = "How far away is a magnetar?"
    question.save()
    assert found(client, "magnetar") == ["Blazar light"]
    lesson.status = Lesson.Status.DRAFT
    lesson.save()
    assert found(client, "blazar") == [] and found(client, "magnetar") == []
    lesson.status = Lesson.Status.PUBLISHED
    lesson.save()
    assert found(client, "magnetar") == ["Blazar light"]
    lesson.delete()
    assert found(client, "blazar") == []


def test_an_import_updates_the_index(client, demo, tmp_path: Path):
    call_command("export_lessons", str(tmp_path), stdout=io.StringIO())
    path = tmp_path / f"{SEED_ID}.md"
    path.write_text(path.read_text().replace("pipeline bubble", "pipeline hiccup", 1))
    assert "pipeline hiccup" in path.read_text()
    call_command("import_lessons", str(tmp_path), stdout=io.StringIO())
    assert found(client, "hiccup") == [demo.title]


def test_an_import_indexes_each_lesson_once_however_many_rows_it_saves(demo, tmp_path: Path):
    """Not once a question: a lesson file whose every question changed writes its entry once."""
    call_command("export_lessons", str(tmp_path), stdout=io.StringIO())
    path = tmp_path / f"{SEED_ID}.md"
    path.write_text(path.read_text().replace("?\n", " ?\n"))
    with CaptureQueriesContext(connection) as queries:
        call_command("import_lessons", str(tmp_path), stdout=io.StringIO())
    assert demo.questions.filter(prompt__endswith=" ?").count() == 8
    entries_written = [q for q in queries if 'INSERT INTO "lessons_searchentry"' in q["sql"]]
    assert len(entries_written) == 1


def test_a_bulk_load_is_found_once_the_index_is_rebuilt(client, demo):
    lesson = Lesson.objects.bulk_create(
        [
            Lesson(
                **{f.attname: getattr(demo, f.attname) for f in Lesson._meta.concrete_fields}
                | {"id": None, "public_id": "mt_bulk000001", "title": "Pulsar timing"}
            )
        ]
    )[0]
    Question.objects.bulk_create(
        [Question(lesson=lesson, position=1, prompt="Which pulsar spins fastest?", choices=[])]
    )
    assert found(client, "pulsar") == []  # a bulk insert sends no signal
    out = io.StringIO()
    call_command("rebuild_search_index", stdout=out)
    assert out.getvalue() == "Search index rebuilt: 4 published lessons.\n"
    assert found(client, "pulsar") == ["Pulsar timing"]


# ---- The page: the header's box, learners' states, pages -----------------------------------


def test_every_page_has_the_search_box_and_it_works_without_javascript(client, demo):
    for path in ("/", "/learn/computing/", demo.get_absolute_url(), "/review", "/progress"):
        html = client.get(path).content.decode()
        form = re.search(
            r'<form class="site-search" role="search" action="/search" method="get">(.*?)</form>',
            html,
            re.S,
        )
        assert form, path
        assert (
            '<label class="visually-hidden" for="site-search-q">Search lessons</label>' in form[1]
        )
        assert 'id="site-search-q" type="search" name="q"' in form[1]
        assert re.search(
            r'<button type="submit">.*<span class="visually-hidden">Search</span></button>', form[1]
        )
    # The form's own GET is the whole page, with the words kept in the box.
    html = client.get("/search", {"q": "pipeline bubble"}).content.decode()
    assert html.startswith("<!doctype html>") and 'name="q" value="pipeline bubble"' in html


def test_htmx_gets_the_results_alone(client, demo):
    response = client.get("/search", {"q": "pipeline bubble"}, headers={"HX-Request": "true"})
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert demo.title in html and "<h1>" in html
    assert "HX-Request" in response["Vary"]
    # The footer, outside what typing replaces, is told this page's twin (it kept the page's
    # the search was typed on: second review of stop 69).
    assert (
        '<span id="twin-link" data-hx-swap-oob="innerHTML"> · <a href="/search.md?q=pipeline%20'
        'bubble" type="text/markdown">'
    ) in html


def test_a_learner_sees_their_state_in_each_lesson(client, demo):
    answer(client, demo, right=True)
    stars = demo.questions.count() + demo.flashcards.count()
    blocks = hit_blocks(client.get("/search", {"q": "parallelism"}).content.decode())
    assert f'<p class="lesson-state">0 lit · 1 kindled of {stars}</p>' in blocks[demo.title]
    others = [block for title, block in blocks.items() if title != demo.title]
    assert others and all(NOT_STARTED in block for block in others)
    twin = client.get("/search.md", {"q": "parallelism"}).content.decode()
    assert f"This learner: 0 lit · 1 kindled of {stars}" in twin


def test_the_results_page_takes_a_constant_number_of_queries(client, demo, assert_max_queries):
    for n in range(30):
        make_lesson(title=f"Orbit {n}", slug=f"orbit-{n}", questions=1, flashcards=0)
    answer(client, demo, right=True)
    # session, learner's progress on the page's lessons, count, page of hits, their lessons,
    # the header's sky counter; on PostgreSQL none more (the suggestion only when nothing matched)
    with assert_max_queries(6):
        response = client.get("/search", {"q": "orbit"})
    assert response.status_code == 200
    with assert_max_queries(4):  # a visitor: no session, no progress, no counter
        response = type(client)().get("/search", {"q": "orbit"})
    assert len(hit_blocks(response.content.decode())) == search.PER_PAGE
    # The same for the htmx fragment and the Markdown twin, and the API (which reads no session)
    with assert_max_queries(6):
        fragment = client.get("/search", {"q": "orbit"}, headers={"HX-Request": "true"})
    assert len(hit_blocks(fragment.content.decode())) == search.PER_PAGE
    with assert_max_queries(6):
        assert client.get("/search.md", {"q": "orbit"}).status_code == 200
    with assert_max_queries(3):
        assert client.get("/api/v1/search", {"q": "orbit"}).status_code == 200
    with assert_max_queries(0):  # only common words: nothing to ask the database
        assert type(client)().get("/search.md", {"q": "the and"}).status_code == 200


def test_results_come_20_a_page(client, db):
    for n in range(25):
        make_lesson(title=f"Meteor {n:02d}", slug=f"meteor-{n}", questions=1, flashcards=0)
    first = client.get("/search", {"q": "meteor"}).content.decode()
    assert len(hit_blocks(first)) == 20 and "Lessons 1 to 20 of 25" in first
    assert 'rel="next" href="/search?q=meteor&amp;page=2"' in first
    second = client.get("/search", {"q": "meteor", "page": "2"}).content.decode()
    assert len(hit_blocks(second)) == 5 and "Lessons 21 to 25 of 25" in second
    # A page past the last, or no page at all, shows a real page.
    for page in ("99", "0", "-1", "x", "9" * 40):
        response = client.get("/search", {"q": "meteor", "page": page})
        assert response.status_code == 200 and hit_blocks(response.content.decode())
    api = client.get("/api/v1/search", {"q": "meteor", "page": 2}).json()
    assert api["count"] == 25 and api["pages"] == 2 and len(api["results"]) == 5
    # The API's pages end, as its lesson list's do: a client that pages until a page is empty
    # stops there, not on a repeat of the last page.
    past = client.get("/api/v1/search", {"q": "meteor", "page": 3}).json()
    assert (past["page"], past["pages"], past["results"]) == (3, 2, [])
    nothing = client.get("/api/v1/search", {"q": "nebulae", "page": 3}).json()
    assert (nothing["count"], nothing["page"], nothing["results"]) == (0, 3, [])


# ---- Odd input -----------------------------------------------------------------------------


def test_an_empty_search_says_what_to_do(client, demo):
    for params in ({}, {"q": ""}, {"q": "   "}):
        response = client.get("/search", params)
        assert response.status_code == 200
        assert "Type a word or two to find a lesson" in response.content.decode()
    assert "Type a word or two" in client.get("/api/v1/search").json()["message"]
    assert "Type a word or two" in client.get("/search.md").content.decode()
    html = client.get("/search", {"q": "the and of"}).content.decode()
    assert "too common to search for" in html


def test_a_half_typed_word_is_told_that_search_matches_whole_words(client, demo):
    """The learners' walk of 2026-12-06: live search said "No published lesson matches" on the
    way to "parallelism" ("paral") with no word on why; it matches whole words."""
    assert demo.title in hit_blocks(client.get("/search", {"q": "parallelism"}).content.decode())
    html = client.get("/search", {"q": "paral"}, headers={"HX-Request": "true"}).content.decode()
    assert "No published lesson matches those words. Search matches whole words: finish a word" in (
        html
    )


ODD = [
    '"',
    '""',
    "*",
    "pipeline*",
    "NEAR(pipeline bubble)",
    "NEAR(",
    "AND OR NOT",
    "pipeline AND OR NOT bubble",
    "'; DROP TABLE lessons_lesson; --",
    "^pipeline",
    "title:pipeline",
    "pipeline:bubble",
    "-",
    "-pipeline",
    "--",
    '"pipeline bubble',
    '""pipeline"" bubble"',
    "(pipeline) {bubble} [x]",
    "pipeline\x00bubble",
    "\\",
    "%_%",
    "ñandú 星",
    "a" * 2000,
    " ".join(["pipeline"] * 200),
    "pipeline " * 30 + "bubble",
]


@pytest.mark.parametrize("words", ODD)
def test_odd_input_gets_results_or_a_message_never_an_error(client, demo, words):
    for path in ("/search", "/search.md", "/api/v1/search"):
        response = client.get(path, {"q": words})
        assert response.status_code == 200, (path, words)
    html = client.get("/search", {"q": words}).content.decode()
    said = re.search(r'<div id="search-results" class="search-results">(.*?)</div>', html, re.S)
    assert said and said[1].strip(), words  # a count, a message or "no lesson matches"


def test_the_search_pages_never_echo_a_control_character(client, demo):
    for path in ("/search", "/search.md"):
        text = client.get(path, {"q": "pipeline\x00bubble\x1b"}).content.decode()
        assert "\x00" not in text and "\x1b" not in text, path
        assert "pipeline bubble" in text, path
    api = client.get("/api/v1/search", {"q": "pipeline\x00bubble"}).json()
    assert api["query"] == "pipeline bubble" and api["count"]


def test_more_than_2000_characters_are_cut_with_a_message(client, demo):
    response = client.get("/api/v1/search", {"q": "a" * 2001})
    assert response.status_code == 422 and "q" in response.json()["detail"]
    many = " ".join(f"word{n}" for n in range(40))
    html = client.get("/search", {"q": "pipeline bubble " + many}).content.decode()
    assert f"Only the first {search.MAX_TERMS} words were searched for." in html


def test_the_engines_read_the_learners_words_the_same_way():
    terms = search.parse('Pipeline "data parallel" -bubble the NEAR( "quo""te" x:y \'; DROP')
    assert terms.include == (
        ("pipeline",),
        ("data", "parallel"),
        ("near",),
        ("quo",),
        ("te",),
        ("x", "y"),
        ("drop",),
    )
    assert terms.exclude == (("bubble",),)
    assert terms.fts5() == (
        '("pipeline" "data parallel" "near" "quo" "te" "x y" "drop") NOT "bubble"'
    )
    assert terms.websearch() == 'pipeline "data parallel" near quo te "x y" drop -bubble'


@pytest.mark.postgres
def test_postgres_suggests_a_spelling_when_nothing_matches(client, demo):
    html = client.get("/search", {"q": "pipline bubbel"}).content.decode()
    assert hit_blocks(html) == {}
    assert 'Did you mean <a href="/search?q=pipeline%20bubble">pipeline bubble</a>?' in html
    assert client.get("/api/v1/search", {"q": "pipline"}).json()["suggestion"] == "pipeline"


def test_the_index_is_the_databases_own(db):
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")
            assert cursor.fetchone()
            cursor.execute(
                "SELECT indexdef FROM pg_indexes WHERE indexname = 'lessons_searchentry_vector'"
            )
            assert "gin (vector)" in cursor.fetchone()[0]
        else:
            cursor.execute("SELECT sql FROM sqlite_master WHERE name = 'lessons_search_fts'")
            assert "fts5" in cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_the_migration_indexes_the_lessons_already_published(client):
    from django.db.migrations.executor import MigrationExecutor
    from django.utils import timezone

    def migrate(target):
        executor = MigrationExecutor(connection)
        executor.migrate([("lessons", target)])
        return MigrationExecutor(connection).loader.project_state([("lessons", target)]).apps

    apps = migrate("0017_flashcard_positions_distinct")
    try:
        subject = apps.get_model("lessons", "Subject").objects.create(slug="s", name="S")
        area = apps.get_model("lessons", "Area").objects.create(subject=subject, slug="a", name="A")
        Lesson_ = apps.get_model("lessons", "Lesson")
        for public_id, title, status in (
            ("mt_migrated01", "Aurora colours", "published"),
            ("mt_migrated02", "Aurora draft", "draft"),
        ):
            Lesson_.objects.create(
                public_id=public_id, slug="x", title=title, summary="Lights.", subject=subject,
                area=area, status=status, age_from=10, age_to=12, created_at=timezone.now(),
                updated_at=timezone.now(),
            )  # fmt: skip
        migrate("0018_search_entry")
        assert found(client, "aurora") == ["Aurora colours"]
    finally:
        MigrationExecutor(connection).migrate(
            MigrationExecutor(connection).loader.graph.leaf_nodes()
        )
