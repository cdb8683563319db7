"""A learner's own parts of a page, rendered into the slots of the page's frame
(lightmysky.lib.frames): the header's counter, the round's progress, a lesson's constellation,
and the practice or review card. The lesson page and the practice pages fill them alike.

Each of these parts shows a few values (two counts, a constellation's stars, a question), and the
same values recur from page to page: a part is rendered once per set of values and then
remembered (`frames.remembered`). Its template reads only the variables listed here, and shows
only what its key holds: a template that comes to show more must have it added to its key. A
card asking a question also shows what differs on every showing (the answer's token, the CSRF
token, and the choices in the order drawn for it): it is remembered with stand-ins for them,
and they are put in afterwards.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import get_script_prefix
from django.utils.html import conditional_escape

from lightmysky.lib.frames import remembered
from lightmysky.lib.markdown import render_inline_markdown
from practice.context_processors import sky_counter

# Stand-ins a remembered part shows where what differs from one showing to the next goes: the
# answer's token, the CSRF token, and each choice's identity and text in the order drawn for
# this showing. Characters no lesson's text holds (Unicode's private use area), put in by one
# pass over the part (`with_tokens`), so nothing put in is read again as a stand-in.
TOKEN, CSRF_TOKEN = "\ue000token\ue000", "\ue000csrf\ue000"
_STAND_IN = re.compile("\ue000(token|csrf|id(\\d+)|text(\\d+))\ue000")


def standing_in(choices: list[dict]) -> list[dict]:
    """The choices as a remembered part is rendered with them: each place's letter and number
    (they follow the place, not the choice) and stand-ins for the identity and text there."""
    return [
        {
            "letter": c["letter"],
            "number": c["number"],
            "id": f"\ue000id{n}\ue000",
            "text": f"\ue000text{n}\ue000",
        }
        for n, c in enumerate(choices)
    ]


def with_tokens(
    html: str, token: str, csrf_token: str | None, choices: list[dict] | None = None
) -> str:
    """A remembered part with this showing's tokens and choices in place of the stand-ins:
    the tokens and identities escaped, each choice's text as `inline_markdown` shows it."""

    def put_in(found: re.Match) -> str:
        kind, id_place, text_place = found[1], found[2], found[3]
        if kind == "token":
            return conditional_escape(token)
        if kind == "csrf":
            return conditional_escape(csrf_token) if csrf_token else found[0]
        place = int(id_place or text_place)
        if choices is None or place >= len(choices):  # left for the part around this one
            return found[0]
        if id_place:
            return conditional_escape(choices[place]["id"])
        return render_inline_markdown(str(choices[place]["text"] or ""))

    return _STAND_IN.sub(put_in, html)


def shown_question(question: Any, choices: list[dict]) -> Hashable:
    """What a question's form shows of it whatever the order of its choices (which stand-ins
    take): its prompt, whether it takes several answers, and how many choices it has."""
    return (question.prompt, question.takes_several, len(choices))


@dataclass(frozen=True)
class Part:
    template: str
    names: tuple[str, ...]  # the context's variables the template reads
    key: Callable[[Mapping[str, Any]], Hashable]  # what it shows of them


def _counter_key(context: Mapping[str, Any]) -> Hashable:
    counter = context["sky_counter"]
    return (counter.learned, counter.due) if counter else None


def _progress_key(context: Mapping[str, Any]) -> Hashable:
    progress = context["progress"]
    return (progress.first_pass_done, len(progress.questions), progress.retries_left)


def _constellation_key(context: Mapping[str, Any]) -> Hashable:
    # Each star as the drawing shows it: its figure, circles and counts follow from these.
    # Building the drawing itself to use as the key cost twenty times as much.
    constellation = context["constellation"]
    return (
        constellation.public_id,
        constellation.title,
        tuple(
            (star.kind, star.key, star.x, star.y, star.state.word, star.opacity, star.label)
            for star in constellation.stars
        ),
    )


def _asks_a_question(context: Mapping[str, Any]) -> bool:
    """A card that asks its question: no answer's feedback, no updates to other parts, and (in
    a round) not the missed questions' practice. The cards' other states are rendered each time."""
    return bool(
        context.get("question")
        and not context.get("feedback")
        and not context.get("missed")
        and not context.get("oob_updates")
    )


def _practice_card_key(context: Mapping[str, Any]) -> Hashable:
    if not _asks_a_question(context):
        return None
    lesson, progress, question = context["lesson"], context["progress"], context["question"]
    return (
        get_script_prefix(),
        lesson.get_practice_url(),
        lesson.get_report_url(),
        progress.retrying,
        progress.step,
        len(progress.questions),
        question.position,
        shown_question(question, context["choices"]),
    )


def _review_card_key(context: Mapping[str, Any]) -> Hashable:
    if not _asks_a_question(context):
        return None
    lesson, question = context["item"].lesson, context["question"]
    return (
        get_script_prefix(),
        context.get("practice"),
        context.get("batch_done"),
        context.get("batch_size"),
        context.get("due_count"),
        lesson.title,
        lesson.get_absolute_url(),
        lesson.get_report_url(),
        question.position,
        shown_question(question, context["choices"]),
    )


PARTS = {
    "counter": Part("practice/_sky_counter.html", ("sky_counter",), _counter_key),
    "progress": Part("practice/_round_progress.html", ("progress",), _progress_key),
    "constellation": Part("practice/_constellation.html", ("constellation",), _constellation_key),
}

# The cards, remembered only while they ask a question (their key is None otherwise).
CARDS = {
    "practice/round.html#practice-card": Part(
        "practice/round.html#practice-card",
        ("lesson", "progress", "question", "choices", "token", "csrf_token"),
        _practice_card_key,
    ),
    "practice/review.html#review-card": Part(
        "practice/review.html#review-card",
        (
            "item",
            "question",
            "choices",
            "practice",
            "batch_done",
            "batch_size",
            "due_count",
            "token",
            "csrf_token",
        ),
        _review_card_key,
    ),
}


def part(
    name: str, context: Mapping[str, Any], request: HttpRequest | None = None
) -> Callable[[], str]:
    """A slot's contents, rendered when the frame asks for them: one of PARTS by its name
    (remembered by what it shows), or any template, rendered with the request and so with the
    context processors. The counter is the learner's own (one query) when the context has none."""
    if (known := PARTS.get(name)) is None:
        return lambda: render_to_string(name, context, request=request)
    if name == "counter" and "sky_counter" not in context and request is not None:
        context = {**context, **sky_counter(request)}
    return lambda: remembered(known.template, known.names, context, known.key(context))


def card(name: str, context: Mapping[str, Any], csrf_token: Any) -> Callable[[], str]:
    """A practice or review card (a template's partial, `name`): remembered while it asks a
    question (CARDS), with this showing's tokens put in; otherwise rendered. Either way without
    the request: a card needs no context processor but the CSRF token's, given here as Django's
    processor gives it (masked when shown)."""
    known = CARDS.get(name)
    key = known.key(context) if known else None
    if known is None or key is None:
        return lambda: render_to_string(name, {**context, "csrf_token": csrf_token})

    def render() -> str:
        shown_csrf_token = str(csrf_token)
        if shown_csrf_token == "NOTPROVIDED":  # no CSRF middleware: no stand-in to replace
            return render_to_string(name, {**context, "csrf_token": csrf_token})
        choices = context["choices"]
        values = {
            **context,
            "token": TOKEN,
            "csrf_token": CSRF_TOKEN,
            "choices": standing_in(choices),
        }
        html = remembered(known.template, known.names, values, key)
        return with_tokens(html, context["token"], shown_csrf_token, choices)

    return render
