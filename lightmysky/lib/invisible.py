"""Characters that show nothing, or change how the text around them is shown.

Lesson texts are read by people, compared by code (a learner's answer is a choice's identity,
an editor's search matches letters) and shown by browsers. A character that shows nothing
makes what is seen differ from what is stored, and a bidi override can make a choice *display*
as something other than what it says. So every character of the Unicode categories Cf
(format), Cc (control, but tab and line breaks), Cs (half a character, which only a JSON escape
can write) and Zl/Zp (line and paragraph separators) is refused, with these exceptions, which
are what right-to-left and emoji text on purpose needs:

- ZERO WIDTH JOINER and NON-JOINER (U+200D, U+200C) next to a letter, mark or symbol beyond
  ASCII: they build emoji sequences (👩‍💻, 🏳️‍🌈), Persian words (می‌خواهم), Indic conjuncts
  and Arabic letter forms. Beside only ASCII, spaces, punctuation or the end of a line they
  join nothing, and are refused.
- The direction marks LRM, RLM and ALM (U+200E, U+200F, U+061C) on a line that holds
  right-to-left letters, where they settle on which side punctuation goes. They reorder
  nothing else; elsewhere they do nothing visible.
- Tag characters (U+E0020–U+E007F) inside an emoji tag sequence: a black flag (U+1F3F4)
  followed by tags up to CANCEL TAG, as in the flags of England, Scotland and Wales.
- The prepended concatenation marks (the Arabic number sign U+0600 and its kin), which are
  format characters that are *shown*, as signs spanning the digits after them.

Everything else in those categories is refused wherever it stands. Among them: ZERO WIDTH
SPACE U+200B, WORD JOINER U+2060, the invisible maths operators U+2061–U+2064, SOFT HYPHEN
U+00AD (shown only where a line breaks), a byte order mark U+FEFF anywhere but the very start
of a file (which the file reader drops), and the embedding, override and isolate controls
U+202A–U+202E and U+2066–U+2069. So are the format controls that only scripts not written
here need (the Mongolian vowel separator, Egyptian hieroglyph and shorthand controls): a lesson
that needs one adds it to the exceptions above. Ordinary letters of any script, including
Hebrew and Arabic, are never format characters, so they always pass; right-to-left text is laid
out by the browser without any control characters. Visible spaces (no-break space, ideographic
space) are spaces, not format characters, and pass.
"""

from __future__ import annotations

import unicodedata
from typing import NamedTuple

REFUSED_CATEGORIES = {"Cf", "Cc", "Cs", "Zl", "Zp"}
ALLOWED_CONTROLS = {"\t", "\n", "\r"}
JOINERS = {"\u200c", "\u200d"}
DIRECTION_MARKS = {"\u200e", "\u200f", "\u061c"}
BIDI_CONTROLS = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
RIGHT_TO_LEFT = {"R", "AL", "AN"}  # bidi classes: Hebrew, Arabic letters, Arabic digits
BYTE_ORDER_MARK = "\ufeff"
BLACK_FLAG = "\U0001f3f4"
CANCEL_TAG = "\U000e007f"
SHOWN_FORMAT_CHARACTERS = set(
    "\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2\U000110bd\U000110cd"
)
CONTEXT_LENGTH = 20


class InvisibleCharacter(NamedTuple):
    """One refused character: where it is (0-based position and 1-based line in the text), which
    it is, and why it is refused."""

    position: int
    line: int
    char: str
    why: str
    context: str  # the visible text just before it on its line ("" at the line's start)

    @property
    def name(self) -> str:
        """`U+200B ZERO WIDTH SPACE`, or `U+0007 (a control character)` for unnamed ones."""
        unnamed = "(half of a character)" if unicodedata.category(self.char) == "Cs" else None
        name = unicodedata.name(self.char, "") or unnamed or "(a control character)"
        return f"U+{ord(self.char):04X} {name}"

    def describe(self) -> str:
        """The character, where it stands and why it is refused, as a sentence to act on."""
        where = f"after “{self.context}”" if self.context else "at the start of the line"
        return f"an invisible character, {self.name}, {where}: {self.why} Delete it."


def invisible_characters(text: str) -> list[InvisibleCharacter]:
    """Every character of the text that is refused as invisible (see the module docstring)."""
    found: list[InvisibleCharacter] = []
    start = 0
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.isprintable():  # printable lines (nearly all) hold no such character
            for offset, char in enumerate(line):
                if char in ALLOWED_CONTROLS or unicodedata.category(char) not in REFUSED_CATEGORIES:
                    continue
                why = _why_refused(line, offset, char)
                if why:
                    context = visible(line[:offset])[-CONTEXT_LENGTH:].lstrip()
                    found.append(InvisibleCharacter(start + offset, number, char, why, context))
        start += len(line) + 1
    return found


def visible(text: str) -> str:
    """The text without the characters of the refused categories, so that quoting it in a
    message shows what it shows (an override quoted would turn the message around too)."""
    return "".join(char for char in text if unicodedata.category(char) not in REFUSED_CATEGORIES)


def _why_refused(line: str, offset: int, char: str) -> str:
    """Why this character, where it stands on its line, is refused; "" when it is allowed."""
    if char in SHOWN_FORMAT_CHARACTERS:
        return ""
    if char in JOINERS:
        neighbours = [line[offset - 1] if offset else "", line[offset + 1 : offset + 2]]
        if any(_joinable(neighbour) for neighbour in neighbours):
            return ""
        return (
            "it joins nothing here: keep it only inside emoji or between the letters of scripts "
            "that need it (Persian, Hindi…)."
        )
    if char in DIRECTION_MARKS:
        # (The marks themselves are of class R and AL, so they do not count.)
        letters = (other for other in line if other not in DIRECTION_MARKS)
        if any(unicodedata.bidirectional(other) in RIGHT_TO_LEFT for other in letters):
            return ""
        return "it sets the direction of text, and this line has no right-to-left letters."
    if char in BIDI_CONTROLS:
        return (
            "it changes the order in which the text around it is shown, so the text can show "
            "something other than what it says. Right-to-left letters need no such character."
        )
    if "\U000e0020" <= char <= CANCEL_TAG and _in_emoji_tag_sequence(line, offset):
        return ""
    if char == BYTE_ORDER_MARK:
        return "a byte order mark belongs only at the very start of a file, and shows nothing."
    category = unicodedata.category(char)
    if category == "Cc":
        return "it is a control character, not text."
    if category == "Cs":
        return (
            "it is half of a character (a lone UTF-16 surrogate, as a JSON escape like \\ud800 "
            "writes it), which no text can hold."
        )
    if category in ("Zl", "Zp"):
        return "it breaks the line in some programs and not in others: start a new line instead."
    return (
        "it shows nothing, yet the text holds it: a search, a copy or a comparison finds "
        "something other than what is seen."
    )


def _joinable(char: str) -> bool:
    """A letter, mark or symbol beyond ASCII: something a joiner can join."""
    return bool(char) and not char.isascii() and unicodedata.category(char)[0] in "LMS"


def _in_emoji_tag_sequence(line: str, offset: int) -> bool:
    """True for a tag character in a run of them that follows a black flag and ends with
    CANCEL TAG (🏴 + tags + cancel: the flags of England, Scotland and Wales)."""
    first = offset
    while first > 0 and "\U000e0020" <= line[first - 1] <= CANCEL_TAG:
        first -= 1
    last = offset
    while last + 1 < len(line) and "\U000e0020" <= line[last + 1] <= CANCEL_TAG:
        last += 1
    return first > 0 and line[first - 1] == BLACK_FLAG and line[last] == CANCEL_TAG
