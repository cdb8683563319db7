from __future__ import annotations

from django.http import HttpRequest
from django.utils import timezone
from django.utils.functional import SimpleLazyObject

from practice import selectors, sky
from practice.selectors import stars


def sky_counter(request: HttpRequest) -> dict:
    """The header's sky counter, computed only if a page shows it and only for a learner. A
    view that has counted the learner's stars already puts its own `sky_counter` in the
    context, which wins over this one: the page counts once."""

    def counter() -> stars.SkyCounter | None:
        learner = selectors.learner_for_request(request)
        return stars.sky_counter(learner=learner, now=timezone.now()) if learner else None

    return {
        "sky_counter": SimpleLazyObject(counter),
        "unlit_days": sky.UNLIT_MAX_INTERVAL.days,  # how soon a star not yet lit comes back
        # What lights a new star of a four-choice question, and of a flashcard: the examples the
        # sittings' ends give.
        "rights_to_light": sky.right_answers_to_light(sky.guess_rate(4, several=False)),
        "card_rights_to_light": sky.right_answers_to_light(sky.FLASHCARD_GUESS_RATE),
    }
