"""`{% question_form action target %}`: a question's form, as `practice/_question_form.html`
shows it, remembered by what it shows (lightmysky.lib.frames.remembered). Of one question, only
the order of its choices, the answer's token and the CSRF token differ from one showing to the
next: they are put in after the rest is read from memory (practice.parts.with_tokens)."""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString, mark_safe

from lightmysky.lib.frames import remembered
from practice.parts import CSRF_TOKEN, TOKEN, shown_question, standing_in, with_tokens

register = template.Library()

TEMPLATE = "practice/_question_form.html"
NAMES = ("question", "choices", "missed", "action", "target", "token", "csrf_token")


@register.simple_tag(takes_context=True)
def question_form(context: template.Context, action: str, target: str) -> SafeString:
    question, choices, missed = context["question"], context["choices"], context.get("missed")
    csrf_token = context.get("csrf_token")
    if csrf_token == "NOTPROVIDED":  # no CSRF middleware: {% csrf_token %} shows nothing
        csrf_token = None
    key = (shown_question(question, choices), missed["number"] if missed else None, action, target)
    values = {
        "question": question,
        "choices": standing_in(choices),
        "missed": missed,
        "action": action,
        "target": target,
        "token": TOKEN,
        "csrf_token": CSRF_TOKEN if csrf_token else None,
    }
    html = remembered(TEMPLATE, NAMES, values, (key, bool(csrf_token)))
    return mark_safe(with_tokens(html, context["token"], csrf_token, choices))  # noqa: S308 (rendered by the template, each token escaped)
