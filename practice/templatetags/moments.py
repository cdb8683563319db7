from __future__ import annotations

from datetime import datetime, timedelta

from django import template

register = template.Library()


@register.filter
def to_the_minute(moment: datetime) -> datetime:
    """The moment at the next whole minute, as pages show it: a page that says a question is
    due at 03:17 must not send a learner who comes at 03:16:40 to an empty /review."""
    if moment.second or moment.microsecond:
        return moment.replace(second=0, microsecond=0) + timedelta(minutes=1)
    return moment
