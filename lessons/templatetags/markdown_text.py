"""Filters for the Markdown twins: plain text that stays pure Markdown, and YAML strings."""

from __future__ import annotations

import json
import re

from django import template

register = template.Library()

_PLAIN_PARAGRAPH = re.compile(r"^[^\s|#>*+\-\d`]")


@register.filter
def md(text: str) -> str:
    """Text for a Markdown twin: any angle bracket is escaped, so no HTML can get through."""
    return str(text or "").replace("\\<", "<").replace("<", "\\<").strip()


@register.filter
def yaml_str(text: str) -> str:
    """A YAML double-quoted string (JSON's escaping is valid YAML)."""
    return json.dumps(str(text or ""), ensure_ascii=False)


@register.filter
def labelled(text: str, label: str) -> str:
    """'**Label.** text', or the label on its own line when the text opens with a table or list."""
    body = md(text)
    if _PLAIN_PARAGRAPH.match(body):
        return f"**{label}.** {body}"
    return f"**{label}.**\n\n{body}"
