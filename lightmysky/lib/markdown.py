"""Markdown to safe HTML, done once when content is saved, never per request."""

from __future__ import annotations

import re

import nh3
from markdown_it import MarkdownIt

# Raw HTML in the source is escaped by the parser; nh3 then keeps only the tags Markdown makes.
_parser = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable(
    "table"
)

ALLOWED_TAGS = {
    "p",
    "br",
    "hr",
    "em",
    "strong",
    "code",
    "pre",
    "blockquote",
    "ul",
    "ol",
    "li",
    "h4",
    "h5",
    "h6",
    "a",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "sub",
    "sup",
}
# No style attributes: the Content Security Policy forbids inline styles.
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}


# Lesson texts sit under the page's h3 headings, so their own headings start at h4.
HEADING_SHIFT = 3
_HEADING = re.compile(r"<(/?)h([1-6])>")


def _shift_heading(match: re.Match) -> str:
    return f"<{match[1]}h{min(int(match[2]) + HEADING_SHIFT, 6)}>"


def render_markdown(source: str) -> str:
    """Render Markdown to sanitised HTML, its headings shifted below the page's own."""
    html = _HEADING.sub(_shift_heading, _parser.render(source or ""))
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer",
    ).strip()
