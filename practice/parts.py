"""A learner's own parts of a page, rendered into the slots of the page's frame
(lightmysky.lib.frames): the header's counter, the round's progress and a lesson's
constellation. The lesson page and the practice pages fill them alike."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.http import HttpRequest
from django.template.loader import render_to_string

TEMPLATES = {
    "counter": "practice/_sky_counter.html",
    "progress": "practice/_round_progress.html",
    "constellation": "practice/_constellation.html",
}


def part(
    template: str, context: Mapping[str, Any], request: HttpRequest | None = None
) -> Callable[[], str]:
    """A slot's contents, rendered when the frame asks for them: one of TEMPLATES by its name,
    or any template. With the request, the context processors fill what `context` leaves out
    (the header's counter, for one)."""
    return lambda: render_to_string(TEMPLATES.get(template, template), context, request=request)
