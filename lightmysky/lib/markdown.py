"""Markdown to safe HTML, done once when content is saved, never per request."""

from __future__ import annotations

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
    "h3",
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


def render_markdown(source: str) -> str:
    """Render Markdown to sanitised HTML; headings are shifted below the page's own h2."""
    html = _parser.render(source or "")
    for level in (2, 1):
        html = html.replace(f"<h{level}>", f"<h{level + 2}>").replace(
            f"</h{level}>", f"</h{level + 2}>"
        )
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer",
    ).strip()
