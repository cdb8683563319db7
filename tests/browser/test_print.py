"""Printing: the worksheet is A4 with its answer key on pages of its own; the lesson prints
without the site's navigation."""

from __future__ import annotations

import io
import unicodedata

import pytest
from pypdf import PdfReader

from lessons.models import Lesson
from tests.conftest import SEED_PATH

A4_POINTS = (595.28, 841.89)


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
def test_the_worksheet_prints_on_a4_with_the_key_on_its_own_page(
    browser, live_server, seed, javascript
):
    """The key is closed on screen (a disclosure) and printed all the same, with or without
    JavaScript."""
    page = browser.new_context(java_script_enabled=javascript).new_page()
    page.goto(live_server.url + SEED_PATH + "/worksheet")
    assert page.evaluate("document.querySelector('details.answer-key').open") is False
    pdf = PdfReader(io.BytesIO(page.pdf(prefer_css_page_size=True, print_background=False)))
    for sheet in pdf.pages:
        width, height = float(sheet.mediabox.width), float(sheet.mediabox.height)
        assert abs(width - A4_POINTS[0]) < 2 and abs(height - A4_POINTS[1]) < 2
    # NFKC undoes the ligatures of the PDF's text ("ﬁ" for "fi").
    texts = [unicodedata.normalize("NFKC", sheet.extract_text()) for sheet in pdf.pages]
    key_pages = [n for n, text in enumerate(texts) if "Answer key" in text.split("\n")[0]]
    assert len(key_pages) == 1
    key = key_pages[0]
    assert key > 0, "the questions come first"
    # Eight questions on at most three sheets, and the key on the last, a page of its own.
    assert len(texts) <= 4 and key == len(texts) - 1, [text[:40] for text in texts]
    assert texts[key].lstrip().startswith("Answer key")
    first_prompt = seed.questions.get(position=1).prompt[:40]
    assert any(first_prompt in " ".join(text.split()) for text in texts[:key])
    assert "Skip to content" not in "".join(texts) and "Review" not in texts[0].split("\n")[0]
    assert "Show the answer key" not in "".join(texts)
    last = seed.questions.get(position=8)
    assert f"{', '.join(last.correct_letters)} · {last.prompt[:30]}" in " ".join(
        " ".join(text.split()) for text in texts[key:]
    )
    assert page.evaluate("document.querySelector('details.answer-key').open") is False
    page.context.close()


def test_every_demo_worksheet_prints_on_four_pages_at_most(page, live_server, seed):
    for lesson in Lesson.objects.filter(status=Lesson.Status.PUBLISHED):
        page.goto(live_server.url + lesson.get_absolute_url() + "/worksheet")
        pdf = PdfReader(io.BytesIO(page.pdf(prefer_css_page_size=True)))
        last = unicodedata.normalize("NFKC", pdf.pages[-1].extract_text())
        assert len(pdf.pages) <= 4 and last.lstrip().startswith("Answer key"), lesson.slug


def test_the_lesson_prints_without_navigation(page, live_server, seed):
    page.goto(live_server.url + SEED_PATH)
    page.emulate_media(media="print")
    hidden = page.evaluate(
        "['.site-header', '.site-footer', '.breadcrumbs', '.skip-link']"
        ".map(s => getComputedStyle(document.querySelector(s)).display)"
    )
    assert hidden == ["none"] * 4
    assert page.locator("h1").is_visible()
