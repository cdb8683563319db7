from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
import yaml
from markdown_it import MarkdownIt

from lessons.models import Lesson
from tests.conftest import SEED_PATH
from tests.factories import make_lesson, make_question

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
        f"Credits: {demo.credits}",  # the page shows them too
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


@pytest.mark.parametrize(
    "typed", [["5.2 GB", "1. Start here", "3) Three"], ["-5 °C", "+3 more", "- a dash", "---"]]
)
def test_a_choice_with_a_number_is_written_as_typed_and_never_opens_a_list(client, db, typed):
    lesson = make_lesson(questions=0)
    make_question(
        lesson,
        choices=[
            {"text": text, "correct": n == 0, "explanation": "" if n == 0 else "No."}
            for n, text in enumerate(typed)
        ],
    )
    text = twin(client, lesson.get_absolute_url() + ".md")
    assert f"** {typed[0]}\n" in text  # an agent quotes a choice by its words: no backslash
    html = MarkdownIt().render(text)
    for shown in typed:
        assert re.search(rf"<li><strong>[A-D]\.</strong> {re.escape(shown)}</li>", html), shown


def test_the_twin_counts_the_stars_the_lesson_page_counts(client, demo):
    text = twin(client)
    cards = demo.flashcards.count()
    assert f"The lesson also has {cards} flashcards" in text
    assert f"each question and each flashcard is a star of their sky, {8 + cards} in all" in text
    page = client.get(SEED_PATH).content.decode()
    assert f"{8 + cards} unlit of {8 + cards} stars" in " ".join(
        re.sub("<[^>]+>", " ", page).split()
    )


def test_a_lesson_without_flashcards_counts_its_questions_alone(client, db):
    lesson = make_lesson(flashcards=0)
    text = twin(client, lesson.get_absolute_url() + ".md")
    assert "each question is a star of their sky" in text and "flashcard" not in text


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


# ("path", not "page": a parameter named like Playwright's `page` fixture is parametrized by
# browser too, which moved the browser tests, whose live server empties the database, ahead of
# other database tests, so the Editors group its migration made was gone for them.)
@pytest.mark.parametrize(
    "path", ["/", "/learn/computing/", SEED_PATH, "/search?q=pipeline", "/sky/words"]
)
def test_every_page_with_a_twin_links_to_it_where_people_can_see_it(client, demo, path):
    """Only a <link rel="alternate"> named it, so a person helping an agent could not find it
    on the page (outside learner review)."""
    html = client.get(path).content.decode()
    link = re.search(
        r'<footer.*<a href="([^"]+)" type="text/markdown">This page in Markdown, for AI agents</a>',
        html,
        re.S,
    )
    assert link, path
    response = client.get(link[1].replace("&amp;", "&"))
    assert response.status_code == 200 and response["Content-Type"].startswith("text/markdown")


def test_home_and_subject_pages_have_twins(client, demo):
    home = twin(client, "/index.md")
    assert home.startswith("---\n") and "# LightMySky" in home
    assert f"({SITE}{SEED_PATH}.md)" in home
    subject = twin(client, "/learn/computing.md")
    assert "# Computing" in subject and "## Machine Learning" in subject
    assert client.get("/", headers={"Accept": "text/markdown"})["Content-Type"].startswith(
        "text/markdown"
    )


def test_the_words_page_twin_has_front_matter_and_the_agent_note(client, db):
    text = twin(client, "/sky/words.md")
    meta = front_matter(text)
    assert meta["title"] == "What the stars mean"
    assert (meta["canonical"], meta["source"]) == (SITE + "/sky/words", SITE + "/sky/words.md")
    assert text.index("> **Agent view.**") < text.index("# What the stars mean")


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


# What an editor could type to hide a harmful link in a twin, or to pass their text off as the
# twin's own headings (the review's payloads, and a few more spellings).
HOSTILE_LINKS = [
    "[jslink](javascript:alert('X'))",
    "[jslink2](JaVaScRiPt:alert('X'))",
    "[jslink4](&#106;avascript:alert('X'))",
    "[angle](<javascript:alert('X')>)",
    "[spaced](  javascript:alert(1) 'a title' )",
    "<javascript:alert('X_AUTOLINK')>",
    "\\\\<javascript:alert('X_ESCAPED_AUTOLINK')>",
    "[datalink](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[vb](vbscript:msgbox(1))",
    "[file](file:///etc/passwd)",
    "![X_MDIMG](javascript:alert(1))",
    "![pixel](https://tracker.example/pixel.png)",
    "[![inner](x.png)](javascript:alert(1))",
    "[by reference][evil]",
]
HOSTILE_MARKDOWN = "\n\n".join(
    [
        "Before [a fine link](https://example.org/fine) and [mail](mailto:ada@example.org).",
        " ".join(HOSTILE_LINKS),
        "[evil]: javascript:alert('X_REFERENCE')",
        "x\n---\ntitle: X_FRONTMATTER\n---\n## Answer key\nQuestion 1: Z (X_FAKEKEY)",
        "# Questions\n\n#### Question 1: D\n\nAnswer key\n==========\n\n> ### Practice",
        "- ## Needs first",
    ]
)
SAFE_SCHEMES = {"http", "https", "mailto"}


def without_front_matter(text: str) -> str:
    """The Markdown after the twin's front matter (which is YAML: its strings are data)."""
    return text.split("\n---\n", 1)[1] if text.startswith("---\n") else text


def markdown_file(client, path: str) -> str:
    response = client.get(path)
    assert response.status_code == 200
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    return response.content.decode()


def rendered(text: str) -> tuple[list[tuple[int, str]], list[str]]:
    """The headings, and the addresses of links and images, that a Markdown renderer trusting
    every link would make of a twin (after its front matter)."""
    body = without_front_matter(text)
    parser = MarkdownIt("commonmark").enable("table")
    parser.validateLink = lambda url: True
    env: dict = {}
    tokens = parser.parse(body, env)
    headings = [
        (int(token.tag[1]), tokens[index + 1].content)
        for index, token in enumerate(tokens)
        if token.type == "heading_open"
    ]
    urls = [
        child.attrs.get("href") or child.attrs.get("src")
        for token in tokens
        for child in token.children or []
        if child.type in ("link_open", "image")
    ]
    return headings, urls + [ref["href"] for ref in env.get("references", {}).values()]


def assert_no_harmful_link(text: str) -> list[str]:
    headings, urls = rendered(text)
    for url in urls:
        scheme = urlsplit(url).scheme.lower()
        assert scheme in SAFE_SCHEMES or (not scheme and not url.startswith("//")), url
    assert "pixel.png" not in urls and "x.png" not in urls  # images are dropped, as on the page
    # Not even as text that looks like a link or an autolink to a reader or a regex.
    text = without_front_matter(text)
    assert not re.search(r"\]\(\s*<?\s*(javascript|data|vbscript|file)", text, re.I)
    assert not re.search(r"(?<!\\)<(javascript|data|vbscript):", text.replace("\\\\", ""), re.I)
    return urls


def twin_headings(lesson) -> list[tuple[int, str]]:
    """The twin's own headings for a lesson with eight questions and no video."""
    questions = list(lesson.questions.all())
    return [
        (2, "Ready when they can"),
        (2, f"Lesson: {lesson.heading}"),
        (2, "Practice"),
        *[(3, f"Question {q.position}") for q in questions],
        (3, "Answer key"),
        *[(4, f"Question {q.position}: {', '.join(q.correct_letters)}") for q in questions],
        (2, "Needs first"),
        (2, "Opens up"),
    ]


@pytest.fixture
def hostile(db):
    lesson = make_lesson(
        questions=0,
        title="Hostile [x](javascript:alert(1)) ## Answer key",
        summary=HOSTILE_MARKDOWN,
        objectives=" ".join(HOSTILE_LINKS) + "\n## Answer key\n# Questions",
        body=HOSTILE_MARKDOWN,
        example=HOSTILE_MARKDOWN,
        recap=HOSTILE_MARKDOWN,
        # Link text with brackets of its own, which only a full Markdown parser takes apart.
        tip="[a [nested] text](javascript:alert('X_NESTED')) and [ok](https://example.org/tip)",
    )
    for position in range(1, 9):
        make_question(
            lesson,
            position=position,
            prompt=HOSTILE_MARKDOWN,
            explanation=HOSTILE_MARKDOWN,
            choices=[
                {"text": HOSTILE_MARKDOWN, "correct": True, "explanation": ""},
                {
                    "text": "B " + HOSTILE_MARKDOWN,
                    "correct": False,
                    "explanation": HOSTILE_MARKDOWN,
                },
            ],
        )
    return lesson


def test_a_lesson_twin_keeps_only_links_the_page_would_keep(client, hostile):
    text = twin(client, hostile.get_absolute_url() + ".md")
    urls = assert_no_harmful_link(text)
    assert "https://example.org/fine" in urls and "mailto:ada@example.org" in urls


def test_the_front_matter_keeps_the_exact_text_but_no_markdown(client, hostile):
    text = twin(client, hostile.get_absolute_url() + ".md")
    meta = front_matter(text)
    assert (meta["title"], meta["description"]) == (hostile.title, hostile.summary)
    # Read as Markdown (llms-full.txt puts it after the previous lesson), it holds no link.
    assert_no_harmful_link(text.split("\n---\n", 1)[0].removeprefix("---\n"))


def test_an_editors_headings_cannot_pass_for_the_twins_own(client, hostile):
    text = twin(client, hostile.get_absolute_url() + ".md")
    headings, _ = rendered(text)
    assert headings[0][0] == 1  # the title
    assert headings[1:] == twin_headings(hostile)
    # Only inside the twin's own "### Answer key", even to a plain search.
    assert without_front_matter(text).count("## Answer key") == 1
    assert "X_FAKEKEY" in text and "**Answer key**" in text  # the editor's text is still there
    assert "\ntitle: X_FRONTMATTER" not in text


@pytest.mark.parametrize(
    "path", ["/llms.txt", "/llms-full.txt", "/index.md", "/learn/computing.md"]
)
def test_every_twin_and_catalog_keeps_only_safe_links(client, hostile, path):
    # llms-full.txt is every lesson's twin, one after another, each with its front matter.
    for part in markdown_file(client, path).split("\n\n---\n\n"):
        assert_no_harmful_link(part)
        assert "## Answer key" not in without_front_matter(part).replace("### Answer key", "")


def test_llms_full_holds_each_lesson_once_with_its_own_headings(client, hostile):
    other = make_lesson(title="Counting Planets", slug="counting-planets")
    parts = markdown_file(client, "/llms-full.txt").split("\n\n---\n\n")
    assert len(parts) == 2
    for lesson, part in zip([hostile, other], parts, strict=True):
        assert rendered(part)[0][1:] == twin_headings(lesson)


def test_an_unclosed_code_block_does_not_swallow_the_rest_of_the_twin(client, db):
    lesson = make_lesson(body="Some code:\n\n```python\nprint('never closed')")
    text = twin(client, lesson.get_absolute_url() + ".md")
    assert "```python\nprint('never closed')\n```" in text
    assert rendered(text)[0][1:] == twin_headings(lesson)
