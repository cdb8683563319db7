from __future__ import annotations

from collections.abc import Iterable
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


@register.filter
def in_minutes(moments: Iterable[datetime]) -> str:
    """Moments as whole minutes since 1970 (UTC), for the page's script, which counts them by
    the learner's own days: every time zone's midnight falls on a whole minute."""
    return " ".join(str(int(moment.timestamp()) // 60) for moment in moments)
