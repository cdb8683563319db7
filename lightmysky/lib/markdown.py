"""Markdown to safe HTML, done once when content is saved, never per request."""

from __future__ import annotations

import re
from functools import lru_cache
from html import unescape

import nh3
from django.utils.html import strip_tags
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
# Links may go to these schemes, or be relative; the pages and their Markdown twins alike.
LINK_SCHEMES = {"http", "https", "mailto"}


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
        url_schemes=LINK_SCHEMES,
        link_rel="noopener noreferrer",
    ).strip()


# A lesson's Read in parts: each of its top headings (h4 on the page) gets an id, and the page
# shows them as an outline.
_PART = re.compile(r"<h4>(.*?)</h4>", re.S)
_ANCHORED_PART = re.compile(r'<h4 id="(part-[\w-]+)">(.*?)</h4>', re.S)


def with_part_anchors(html: str) -> str:
    """Rendered lesson text with an id on each of its parts' headings."""
    taken: set[str] = set()

    def anchor(match: re.Match) -> str:
        words = re.sub(r"[^\w]+", "-", unescape(re.sub(r"<[^>]+>", "", match[1])).lower())
        name = f"part-{words.strip('-')[:40] or 'untitled'}"
        while name in taken:
            name += "-"
        taken.add(name)
        return f'<h4 id="{name}">{match[1]}</h4>'

    return _PART.sub(anchor, html)


def parts_of(html: str) -> list[tuple[str, str]]:
    """(id, heading as HTML) of each part of rendered lesson text (`with_part_anchors`)."""
    return _ANCHORED_PART.findall(html)


_FIRST_PARAGRAPH = re.compile(r"<p>(.*?)</p>", re.S)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[^\s.!?])")


def plain_text(html: str) -> str:
    """Rendered text as its reader sees it: no tags, entities read, spaces collapsed."""
    return " ".join(unescape(strip_tags(html)).split())


def first_sentence(html: str) -> str:
    """The first sentence of rendered text's first paragraph, as plain text: where a verdict
    starts the explanation that follows in full."""
    paragraph = _FIRST_PARAGRAPH.search(html)
    text = plain_text(paragraph[1] if paragraph else html)
    return _SENTENCE_END.split(text, maxsplit=1)[0]


# The Markdown twins show editors' Markdown as Markdown, under the same rules as the HTML page:
# links only to these schemes (or relative), no images, no raw HTML. Their own structure is
# headings, so an editor's heading becomes a bold line: no text in a field can pass for the
# twin's "Answer key" or "Question 3", whatever level it picks.
class _SeesLinksAsWritten(MarkdownIt):
    """Every destination as written (markdown-it-py's method names), so that the checks below
    judge what a renderer would get."""

    def validateLink(self, url: str) -> bool:
        return True

    def normalizeLink(self, url: str) -> str:
        return url


_twin_parser = _SeesLinksAsWritten("commonmark", {"html": False}).enable("table")
_SCHEME = re.compile(r"([a-zA-Z][a-zA-Z0-9+.\-]*):")
_CONTROL_OR_SPACE = re.compile(r"[\x00-\x20\x7f]")
_UNESCAPED_ANGLE = re.compile(r"(?<!\\)((?:\\\\)*)<")
_UNESCAPED_IN_TEXT = re.compile(r"(?<!\\)((?:\\\\)*)([<\[\]#])")
_ESCAPED = r"\\."
_INLINE_LINK = re.compile(
    r"(?P<image>!?)\[(?P<text>(?:[^\[\]\\]|" + _ESCAPED + r")*)\]"
    r"\(\s*(?P<url><(?:[^<>\\\n]|" + _ESCAPED + r")*>|(?:[^\s()\\]|" + _ESCAPED
    + r"|\((?:[^\s()\\]|" + _ESCAPED + r")*\))*)"
    r"(?:\s+(?:\"(?:[^\"\\]|" + _ESCAPED + r")*\"|'(?:[^'\\]|" + _ESCAPED
    + r")*'|\((?:[^()\\]|" + _ESCAPED + r")*\)))?\s*\)"
)  # fmt: skip
_DEFINITION = re.compile(
    r"^ {0,3}\[(?:[^\[\]\\]|" + _ESCAPED + r")+\]:[ \t]*\n?[ \t]*(?P<url><[^<>\n]*>|\S+).*$",
    re.MULTILINE,
)
_INLINE_MARKUP = re.compile(r"([\\`*_\[\]()#<>|~&!])")
# A bullet or a number opens a list only when a space or the line's end follows it, and a dash
# or star otherwise only in a line of nothing else (a rule): "5.2 GB", "-5 °C" and "+3" are shown
# as written.
_BLOCK_START = re.compile(
    r"^(#+|[>=_`~]|[+\-*](?=[ \t]|$)|[-*](?=[-*_ \t]*$))|^(\d+)([.)])(?=[ \t]|$)"
)


def link_allowed(url: str) -> bool:
    """The HTML pages' link policy: http, https and mailto, or a relative address."""
    scheme = _SCHEME.match(_CONTROL_OR_SPACE.sub("", unescape(url)))
    return scheme is None or scheme[1].lower() in LINK_SCHEMES


@lru_cache(maxsize=2048)  # twins show the same texts again and again; parsing them is not free
def markdown_for_twin(source: str) -> str:
    """An editor's Markdown as a twin shows it: the HTML page's link policy, headings as bold
    lines, angle brackets escaped, and no code fence left open to swallow what follows."""
    text = source or ""
    for _ in range(3):  # an image inside a link comes apart one layer at a time
        if not _has_dropped_link(text):
            break
        text = _DEFINITION.sub(_keep_allowed_definition, _INLINE_LINK.sub(_keep_allowed_link, text))
    text = _UNESCAPED_ANGLE.sub(r"\1\\<", text)
    text = _close_open_fence(_headings_as_bold_lines(text))
    if _has_heading(text) or _has_dropped_link(text):
        text = _as_plain_text(source or "")  # Markdown the rewrites above could not take apart
    return text.strip()


def text_for_twin(text: str) -> str:
    """Plain text (a title, a prompt, a choice) for a twin: one line that Markdown shows as
    written, never a link, a heading or another block, wherever the template puts it. Every
    `#` is escaped too, so not even a search for "## Answer key" finds one in it."""
    line = _UNESCAPED_IN_TEXT.sub(r"\1\\\2", " ".join((text or "").split()))
    return _as_paragraph(line.replace("\\](", "\\]\\("))


def _as_plain_text(source: str) -> str:
    """Markdown shown as the characters typed: nothing in it is a link, a heading or a block."""
    lines = [_INLINE_MARKUP.sub(r"\\\1", line.strip()) for line in source.split("\n")]
    return "\n".join(_as_paragraph(line) for line in lines)


def _as_paragraph(line: str) -> str:
    """The line with a backslash before whatever would open a block (`#`, `>`, `-`, `1.`…)."""

    def escape(match: re.Match) -> str:
        if match[1]:
            return "".join("\\" + mark for mark in match[1])
        return f"{match[2]}\\{match[3]}"

    return _BLOCK_START.sub(escape, line)


def _keep_allowed_link(match: re.Match) -> str:
    """Images become their text, and so do links whose address the HTML page would drop."""
    url = _without_backslashes(match["url"].removeprefix("<").removesuffix(">"))
    return match[0] if not match["image"] and link_allowed(url) else match["text"]


def _keep_allowed_definition(match: re.Match) -> str:
    url = _without_backslashes(match["url"].removeprefix("<").removesuffix(">"))
    return match[0] if link_allowed(url) else ""


def _headings_as_bold_lines(text: str) -> str:
    lines: list[str | None] = list(text.split("\n"))
    tokens = _twin_parser.parse(text)
    for index, token in enumerate(tokens):
        if token.type != "heading_open" or token.map is None:
            continue
        first, end = token.map
        content = tokens[index + 1].content
        line = lines[first] or ""
        # Keep what opens the line inside a list or a quote (`> `, `- `); drop the heading marks.
        if token.markup.startswith("#"):
            prefix = line[: line.index("#")]
        else:
            start = line.find(content.split("\n")[0])
            prefix = line[:start] if start > 0 else ""
        lines[first] = prefix + _bold_line(" ".join(content.split()))
        if not prefix.strip():  # a paragraph of its own, as the heading was a block of its own
            previous = (lines[first - 1] or "") if first > 0 else ""
            heading = lines[first] or ""
            if previous.strip() and not previous.endswith("\n"):
                heading = "\n" + heading
            if end < len(lines) and (lines[end] or "").strip():
                heading += "\n"
            lines[first] = heading
        for number in range(first + 1, end):
            lines[number] = None  # the rest of a setext heading: its other lines and underline
    return "\n".join(line for line in lines if line is not None)


def _bold_line(text: str) -> str:
    for mark in ("**", "__"):
        if text and mark[0] not in text:
            return f"{mark}{text}{mark}"
    return _as_paragraph(text)


def _close_open_fence(text: str) -> str:
    lines = text.split("\n")
    for token in _twin_parser.parse(text):
        if token.type == "fence" and token.level == 0 and token.map:
            last = lines[token.map[1] - 1].strip()
            closed = token.map[1] - token.map[0] > 1 and (
                set(last) == {token.markup[0]} and len(last) >= len(token.markup)
            )
            if not closed:
                return text + "\n" + token.markup
    return text


def _has_heading(text: str) -> bool:
    return any(token.type == "heading_open" for token in _twin_parser.parse(text))


def _has_dropped_link(text: str) -> bool:
    """True when the Markdown holds an image, or a link the HTML page would drop."""
    env: dict = {}
    urls = []
    for token in _twin_parser.parse(text, env):
        for child in token.children or []:
            if child.type == "image":
                return True
            if child.type == "link_open":
                urls.append(str(child.attrs.get("href", "")))
    urls += [reference["href"] for reference in env.get("references", {}).values()]
    return not all(link_allowed(url) for url in urls)


def _without_backslashes(url: str) -> str:
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", url)


# Prompts, choices, their "why wrong" and flashcards: one line of text with inline code, bold
# and italic, nothing else. What this leaves as typed (links, images, HTML) is reported to the
# editor by markdown_losses, so nothing disappears without a word.
_inline_parser = MarkdownIt("zero").enable(["backticks", "emphasis", "escape", "newline"])
INLINE_TAGS = {"code", "strong", "em", "br"}


@lru_cache(maxsize=4096)  # the same prompts and choices are shown again and again
def render_inline_markdown(source: str) -> str:
    """Inline Markdown (`code`, **bold**, *italic*) as sanitised HTML, with no block around it."""
    html = _inline_parser.renderInline(source or "")
    return nh3.clean(html, tags=INLINE_TAGS, attributes={}).strip()


# text_join off: an escaped character stays a token of its own, so a `**` left in a text token
# is one the editor typed unescaped, and that no other `**` closed.
# Every link as written too: one to javascript: is no link to a renderer that refuses it, and
# would pass unsaid.
_loss_parser = (
    _SeesLinksAsWritten("commonmark", {"html": True}).enable("table").disable("text_join")
)
_LATEX = re.compile(r"\\\(|\\\)|\\\[|\\\]")
_UNCLOSED_STRONG = re.compile(r"\*{2,}")


def markdown_losses(source: str, *, inline: bool = False) -> list[str]:
    """What the page will not show as the editor meant it: an image (dropped, with its text), a
    link where none is made or to an address the page drops, raw HTML (shown as typed), maths
    whose backslashes Markdown takes away, a code block never closed (the rest becomes code),
    a `**` never closed. Each as a sentence the editor can act on."""
    return list(dict.fromkeys(text for _, text in markdown_losses_at(source, inline=inline)))


def markdown_losses_at(source: str, *, inline: bool = False) -> list[tuple[int, str]]:
    """markdown_losses, each with the line of the source (counted from 1) where it is."""
    text = source or ""
    lines = text.split("\n")
    losses: list[tuple[int, str]] = []
    for token in _loss_parser.parse(text):
        first = token.map[0] + 1 if token.map else 1
        if token.type == "html_block":
            html = token.content.strip().split("\n")[0]
            losses.append(
                (
                    first,
                    f"HTML ({html[:40]}) is shown as typed, not as markup: write it with "
                    "Markdown instead.",
                )
            )
        elif token.type == "fence" and not inline and not _fence_closed(token, lines):
            losses.append(
                (
                    first,
                    f"This code block ({token.markup}) is never closed, so everything after it "
                    f"is shown as code: end it with a line of {token.markup}.",
                )
            )
        elif token.type == "inline" and token.children:
            losses += [(first + line, loss) for line, loss in _inline_losses(token, inline=inline)]
    if latex := _LATEX.search(text):
        losses.append(
            (
                text.count("\n", 0, latex.start()) + 1,
                "Maths written as \\( … \\) loses its backslashes and is not typeset: write it "
                "in plain characters (x², √2, ≤).",
            )
        )
    return sorted(dict.fromkeys(losses), key=lambda loss: loss[0])


def _inline_losses(token, *, inline: bool) -> list[tuple[int, str]]:
    """The losses in one paragraph (or heading, or table cell), each with its line counted from
    the paragraph's first (0). Each child is looked for in the paragraph's text after the one
    before it, so a loss gets the line it is on."""
    content = token.content
    losses: list[tuple[int, str]] = []
    cursor = 0

    def at(needle: str) -> int:
        """Where the needle is, from the cursor on, as a line; moves the cursor past it."""
        nonlocal cursor
        found = content.find(needle, cursor) if needle else -1
        position = found if found >= 0 else cursor
        cursor = position + len(needle) if found >= 0 else cursor
        return content.count("\n", 0, position)

    for child in token.children or []:
        if child.type == "image":
            line = at("![")
            alt = "".join(c.content for c in child.children or []) or "no text"
            what = "is shown as typed" if inline else "is dropped, with its text"
            losses.append(
                (
                    line,
                    f"An image (“{alt[:60]}”) {what}: lessons show no images. Describe it in "
                    "words.",
                )
            )
        elif child.type == "link_open":
            line = at("<" if child.markup == "autolink" else "[")
            href = str(child.attrs.get("href", ""))
            if inline:
                losses.append(
                    (
                        line,
                        f"A link (to {href[:80]}) is shown as typed: only the lesson's Markdown "
                        "fields make links.",
                    )
                )
            elif not link_allowed(href):
                losses.append(
                    (
                        line,
                        f"A link to {href[:80]} is not made: links go to http, https or "
                        "mailto addresses.",
                    )
                )
        elif child.type == "html_inline":
            line = at(child.content)
            if not child.content.startswith("</"):
                losses.append(
                    (
                        line,
                        f"HTML ({child.content[:40]}) is shown as typed, not as markup: write it "
                        "with Markdown or plain characters (H₂O, x²).",
                    )
                )
        elif child.type == "text" and "**" in child.content:
            offset = max(content.find(child.content, cursor), cursor)
            at(child.content)
            for stars in _UNCLOSED_STRONG.finditer(child.content):
                before = child.content[stars.start() - 1 : stars.start()] or "x"
                after = child.content[stars.end() : stars.end() + 1] or "x"
                if before.isspace() and after.isspace():
                    continue  # `2 ** 3`: stars standing alone are meant as stars
                losses.append(
                    (
                        content.count("\n", 0, offset + stars.start()),
                        f"This {stars[0]} is never closed, so it is shown as typed: close it "
                        "(**bold**), or write \\*\\* for the stars themselves.",
                    )
                )
        else:
            at(
                "\n"
                if child.type in ("softbreak", "hardbreak")
                else (child.content if child.type == "text" else child.markup)
            )
    return losses


def _fence_closed(token, lines: list[str]) -> bool:
    """True when the code block ends with its closing fence, not with the text (or with the
    list or quote it is in)."""
    first, end = token.map
    last = lines[end - 1].lstrip(" \t>").rstrip() if end > first + 1 else ""
    return set(last) == {token.markup[0]} and len(last) >= len(token.markup)
