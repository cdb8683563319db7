"""A learner's own parts of a page, rendered into the slots of the page's frame
(lightmysky.lib.frames): the header's counter, the round's progress and a lesson's
constellation. The lesson page and the practice pages fill them alike.

Each of these parts shows a few values (two counts, a constellation's stars), and the same values
recur from page to page: a part is rendered once per set of values and then remembered
(`frames.remembered`). Its template reads only the variables listed here, and shows only what
its key holds: a template that comes to show more must have it added to its key.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest
from django.template.loader import render_to_string

from lightmysky.lib.frames import remembered
from practice.context_processors import sky_counter


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


PARTS = {
    "counter": Part("practice/_sky_counter.html", ("sky_counter",), _counter_key),
    "progress": Part("practice/_round_progress.html", ("progress",), _progress_key),
    "constellation": Part("practice/_constellation.html", ("constellation",), _constellation_key),
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
