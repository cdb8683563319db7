"""The admin home's line about problem reports learners sent that nobody has looked at yet."""

from __future__ import annotations

from django import template
from django.urls import reverse
from django.utils.html import format_html

from lessons.models import ProblemReport

register = template.Library()


@register.simple_tag(takes_context=True)
def new_reports_notice(context) -> str:
    user = context.get("user")
    if user is None or not user.has_perm("lessons.view_problemreport"):
        return ""
    count = ProblemReport.objects.filter(status=ProblemReport.Status.NEW).count()
    url = reverse("admin:lessons_problemreport_changelist") + f"?state={ProblemReport.Status.NEW}"
    words = (
        f"{count} new problem report{'s' if count != 1 else ''}"
        if count
        else "No new problem reports"
    )
    return format_html(
        '<p class="new-reports"><a href="{}">{}</a> from learners{}.</p>',
        url,
        words,
        ": read them, then accept, fix or dismiss each" if count else "",
    )
