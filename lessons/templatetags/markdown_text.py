"""Filters for the Markdown twins (editors' Markdown and plain text made safe, YAML strings), and
the HTML pages' inline Markdown of prompts, choices and flashcards."""

from __future__ import annotations

import json
import re

from django import template
from django.utils.safestring import SafeString, mark_safe

from lightmysky.lib.markdown import markdown_for_twin, render_inline_markdown, text_for_twin

register = template.Library()

_PLAIN_PARAGRAPH = re.compile(r"^[^\s|#>*+\-\d`]")


@register.filter
def md(source: str) -> str:
    """An editor's Markdown (a body, an explanation) as the twin shows it, under the HTML
    page's rules: no raw HTML, no link it would drop, and no heading of its own."""
    return markdown_for_twin(str(source or ""))


@register.filter
def md_text(text: str) -> str:
    """Plain text (a title, a prompt, a choice) as the twin shows it: one line, as written."""
    return text_for_twin(str(text or ""))


@register.filter
def inline_markdown(text: str) -> SafeString:
    """A prompt, a choice, its "why wrong" or a flashcard face as HTML: `code`, **bold** and
    *italic* made, everything else escaped (sanitised by nh3)."""
    return mark_safe(render_inline_markdown(str(text or "")))  # noqa: S308 (nh3-cleaned)


# In llms-full.txt a lesson's front matter follows the previous lesson, where a renderer that
# knows no front matter reads it as Markdown: there these characters could make HTML, a link
# or a heading. Written as \u escapes they are plain text to Markdown, and YAML reads them back.
_MARKDOWN_IN_YAML = str.maketrans({char: f"\\u{ord(char):04x}" for char in "<>[]#"})


@register.filter
def yaml_str(text: str) -> str:
    """A YAML double-quoted string (JSON's escaping is valid YAML) that Markdown leaves alone."""
    return json.dumps(str(text or ""), ensure_ascii=False).translate(_MARKDOWN_IN_YAML)


@register.filter
def labelled(text: str, label: str) -> str:
    """'**Label.** text', or the label on its own line when the text opens with a table or list."""
    body = md(text)
    if _PLAIN_PARAGRAPH.match(body):
        return f"**{label}.** {body}"
    return f"**{label}.**\n\n{body}"
