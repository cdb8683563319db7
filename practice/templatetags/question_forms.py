"""`{% question_form action target %}`: a question's form, as `practice/_question_form.html`
shows it, remembered by what it shows (lightmysky.lib.frames.remembered). Of one question shown
in one order, only the answer's token and the CSRF token differ from one showing to the next:
they are put in after the rest is read from memory."""

from __future__ import annotations

from django import template
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe

from lightmysky.lib.frames import remembered

register = template.Library()

TEMPLATE = "practice/_question_form.html"
NAMES = ("question", "choices", "missed", "action", "target", "token", "csrf_token")
# Stand-ins the template shows where the tokens go: characters no text of a lesson holds.
TOKEN, CSRF_TOKEN = "\ue000token\ue000", "\ue000csrf\ue000"


@register.simple_tag(takes_context=True)
def question_form(context: template.Context, action: str, target: str) -> SafeString:
    question, choices, missed = context["question"], context["choices"], context.get("missed")
    csrf_token = context.get("csrf_token")
    if csrf_token == "NOTPROVIDED":  # no CSRF middleware: {% csrf_token %} shows nothing
        csrf_token = None
    key = (
        question.prompt,
        question.takes_several,
        tuple((c["id"], c["letter"], c["number"], c["text"]) for c in choices),
        missed["number"] if missed else None,
        action,
        target,
    )
    values = {
        "question": question,
        "choices": choices,
        "missed": missed,
        "action": action,
        "target": target,
        "token": TOKEN,
        "csrf_token": CSRF_TOKEN if csrf_token else None,
    }
    html = remembered(TEMPLATE, NAMES, values, (key, bool(csrf_token)))
    html = html.replace(TOKEN, conditional_escape(context["token"]))
    if csrf_token:
        html = html.replace(CSRF_TOKEN, conditional_escape(csrf_token))
    return mark_safe(html)  # noqa: S308 (rendered by the template, each token escaped)
