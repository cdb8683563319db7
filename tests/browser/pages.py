"""The pages a learner meets, and how to bring each into the state worth checking."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.conftest import SEED_PATH
from tools import catalogue

WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa"]


def answer_first_question(page: Page, base: str) -> None:
    page.goto(base + SEED_PATH + "/practice")
    page.locator("input[name=choice]").first.check()
    page.get_by_role("button", name="Check my answer").click()
    expect(page.locator("#feedback")).to_be_visible()


def sky_after_an_answer(page: Page, base: str) -> None:
    """The sky of a learner who has started one lesson: a card, a canvas, outlines."""
    answer_first_question(page, base)
    page.goto(base + "/sky")


def after_an_answer(path: str):
    """A page as a learner sees it once they have answered a question: lesson states, the home
    page's small sky, /progress's figures and weekly chart."""

    def step(page: Page, base: str) -> None:
        answer_first_question(page, base)
        page.goto(base + path)

    return step


def round_played_to_its_end(page: Page, base: str) -> None:
    """A whole round, always the first choice, to its results on the lesson's constellation."""
    page.goto(base + SEED_PATH + "/practice")
    for _ in range(20):
        page.locator("input[name=choice]").first.check()
        page.get_by_role("button", name="Check my answer").click()
        expect(page.locator("#feedback")).to_be_visible()
        results = page.get_by_role("link", name="See your results")
        if results.count():
            results.click()
            break
        page.get_by_role("link", name="Continue").click()
    expect(page.get_by_text("Practise the ones I missed")).to_be_visible()


def missed_practice(page: Page, base: str) -> None:
    """ "Practise the ones I missed", after a round: the first missed question once more."""
    round_played_to_its_end(page, base)
    page.get_by_text("Practise the ones I missed").click()
    expect(page.locator("input[name=choice]").first).to_be_attached()


def new_round_within_the_hour(page: Page, base: str) -> None:
    """ "Practise again" right after a round: its first question, under the notice that its
    answers are practice for the hour."""
    round_played_to_its_end(page, base)
    page.get_by_role("link", name="Practise again").click()
    expect(
        page.get_by_text("You answered some of these questions within the last hour")
    ).to_be_visible()


def sky_of_a_large_catalogue(page: Page, base: str) -> None:
    """A catalogue too large to name every lesson on the canvas: the lessons not started are a
    faint path per subject, with one link each to the subject's table."""
    catalogue.add_lessons(60, subjects=3)
    sky_after_an_answer(page, base)


def sky_table_of_a_large_catalogue(page: Page, base: str) -> None:
    """The table's first subject, with its started lesson, and the subjects to page through."""
    catalogue.add_lessons(60, subjects=3)
    answer_first_question(page, base)
    page.goto(base + "/sky/table")


def show_answer_key(page: Page, base: str) -> None:
    page.goto(base + SEED_PATH + "/worksheet")
    page.get_by_text("Show the answer key").click()
    expect(page.get_by_role("heading", name="Answer key")).to_be_visible()


def reveal_flashcard(page: Page, base: str) -> None:
    page.goto(base + SEED_PATH + "/flashcards")
    page.get_by_text("Show the answer").click()
    expect(page.get_by_role("button", name="Good")).to_be_visible()


def flashcards_left_part_way(page: Page, base: str) -> None:
    """A set left after its first card and opened again: it goes on at card 2, saying so."""
    reveal_flashcard(page, base)
    page.get_by_role("button", name="Good").click()
    expect(page.get_by_role("heading", name=re.compile("Card 2 of"))).to_be_visible()
    page.goto(base + SEED_PATH)
    page.goto(base + SEED_PATH + "/flashcards")
    expect(page.get_by_text("Going on with the set you left part-way")).to_be_visible()


# name: (path, extra step after loading or None)
PAGES = {
    "home": ("/", None),
    "home after an answer": (None, after_an_answer("/")),
    "subject": ("/learn/computing/", None),
    "subject after an answer": (None, after_an_answer("/learn/computing/")),
    "lesson": (SEED_PATH, None),
    "practice question": (SEED_PATH + "/practice", None),
    "practice feedback": (None, answer_first_question),
    "round results": (None, round_played_to_its_end),
    "missed practice": (None, missed_practice),
    "new round within the hour": (None, new_round_within_the_hour),
    "flashcards": (SEED_PATH + "/flashcards", None),
    "flashcard revealed": (None, reveal_flashcard),
    "flashcards left part-way": (None, flashcards_left_part_way),
    "review": ("/review", None),
    "sky": ("/sky", None),
    "sky of a started lesson": (None, sky_after_an_answer),
    "sky table": ("/sky/table", None),
    "sky of a large catalogue": (None, sky_of_a_large_catalogue),
    "sky table of a large catalogue": (None, sky_table_of_a_large_catalogue),
    "progress": ("/progress", None),
    "progress after an answer": (None, after_an_answer("/progress")),
    "worksheet": (SEED_PATH + "/worksheet", None),
    "worksheet answer key": (None, show_answer_key),
    "worksheet code": ("/w", None),
    "worksheet answers": (SEED_PATH + "/worksheet/answers", None),
    "report": (SEED_PATH + "/report", None),
    "search results": ("/search?q=pipeline+bubble", None),
    "search results after an answer": (None, after_an_answer("/search?q=parallelism")),
    "search with nothing found": ("/search?q=zebra", None),
}


def open_page(page: Page, base: str, name: str) -> None:
    path, step = PAGES[name]
    if path is not None:
        page.goto(base + path)
    if step is not None:
        step(page, base)
