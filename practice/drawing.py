"""How the sky is drawn: stars and constellations as SVG, the same for every page that shows
them (the lesson page, the practice and review pages, the whole sky, the home page). No
database: practice.selectors.stars and practice.selectors.sky_map build what is drawn here."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from django.template.defaultfilters import pluralize
from django.utils.html import escape, format_html_join
from django.utils.safestring import SafeString, mark_safe

from practice import sky


@dataclass(frozen=True, slots=True)
class Star:
    kind: str
    number: int
    key: str
    label: str
    state: sky.StarState
    x: float
    y: float
    ever_lit: bool = False

    @property
    def twinkle(self) -> int:
        """One of five twinkle phases, so lit stars do not pulse in step."""
        return int(sky._unit(self.key, "twinkle") * 5)

    @property
    def opacity(self) -> str:
        """Lit and kindled stars fade with retrievability, to their dimmest when due (their
        light only: the ring that says due stays bright); unlit ones are drawn by shape."""
        return f"{0.45 + 0.55 * self.state.brightness:.2f}" if self.state.word != sky.UNLIT else "1"

    @property
    def css_class(self) -> str:
        """Its evidence's class, then `due` and `missed` where they apply (a ring around it)."""
        classes = ["star", self.state.word]
        if self.state.word == sky.LIT:
            classes.append(f"tw{self.twinkle}")
        if self.state.is_due:
            classes.append(sky.DUE)
        if self.state.missed:
            classes.append(sky.MISSED)
        return " ".join(classes)

    @property
    def radius(self) -> float:
        return STAR_RADIUS[self.state.word]


# Stars differ by shape and size, not colour alone: a small dot (unlit), a middling star in a halo
# (kindled), a full star (lit); a due star wears a dashed ring, a missed one a red ring.
STAR_RADIUS = {sky.UNLIT: 2.6, sky.KINDLED: 4.2, sky.LIT: 5.5}
# How the legend draws each word: its classes and radius (a missed star's ring needs the room).
LEGEND = {word: (str(word), radius) for word, radius in STAR_RADIUS.items()} | {
    sky.DUE: ("lit due", STAR_RADIUS[sky.LIT]),
    sky.MISSED: ("unlit missed", 3.4),
}
# A lesson not started is an outline this much smaller than a constellation the learner started.
NOT_STARTED_SCALE = 0.55


class StarCounts:
    """How many stars are in each state, for anything that has `stars`: the evidence (lit,
    kindled, unlit: each star is one of them) and, apart from it, due and missed."""

    stars: Sequence[Star]

    def _count(self, word: str) -> int:
        return sum(1 for star in self.stars if star.state.word == word)

    @property
    def lit(self) -> int:
        return self._count(sky.LIT)

    @property
    def kindled(self) -> int:
        return self._count(sky.KINDLED)

    @property
    def unlit(self) -> int:
        return self._count(sky.UNLIT)

    @property
    def due(self) -> int:
        return sum(1 for star in self.stars if star.state.is_due)

    @property
    def missed(self) -> int:
        return sum(1 for star in self.stars if star.state.missed)

    @property
    def answered(self) -> int:
        """Stars whose item has been answered or rated at least once."""
        return sum(1 for star in self.stars if star.state.due is not None)

    @property
    def ever_lit(self) -> int:
        """Stars ever lit: confirmed over a day or more at least once, whatever they are now."""
        return sum(1 for star in self.stars if star.ever_lit)


@dataclass(frozen=True)
class Constellation(StarCounts):
    lesson_id: int
    public_id: str
    title: str
    url: str
    stars: tuple[Star, ...]
    x: float = 0.0
    y: float = 0.0

    @property
    def stars_svg(self) -> SafeString:
        """The stars as SVG circles, built in Python rather than with a template loop (about ten
        times faster for a large sky). Only the label is text from outside (a lesson's title),
        so only it is escaped: escaping the numbers too took half the time."""
        return mark_safe(
            "".join(
                f'<circle class="{s.css_class}" cx="{s.x}" cy="{s.y}" r="{s.radius}" '
                f'fill-opacity="{s.opacity}" role="img"><title>{escape(s.label)}</title></circle>'
                for s in self.stars
            )
        )

    @property
    def made_of(self) -> str:
        """'8 questions, 8 flashcards': what its stars stand for (a lesson's 8 questions are
        not all its stars)."""
        cards = sum(1 for s in self.stars if s.kind == "flashcard")
        questions = len(self.stars) - cards
        parts = [(questions, "question"), (cards, "flashcard")]
        return ", ".join(f"{n} {word}{pluralize(n)}" for n, word in parts if n)

    @property
    def figure_points(self) -> str:
        """The constellation's figure: its questions joined in order."""
        return " ".join(f"{s.x},{s.y}" for s in self.stars if s.kind == "question")

    @property
    def outline_points(self) -> str:
        """A lesson not started, drawn small: its figure drawn towards its centre, so that on
        the whole sky the learner's own constellations take the room."""
        scale = NOT_STARTED_SCALE
        return " ".join(
            f"{self.x + (s.x - self.x) * scale:.1f},{self.y + (s.y - self.y) * scale:.1f}"
            for s in self.stars
            if s.kind == "question"
        )

    @property
    def outline_radius(self) -> int:
        return round(NOT_STARTED_SCALE * (sky.CONSTELLATION_RADIUS + 4))

    @property
    def outline_name_y(self) -> float:
        """Where a not-started lesson's name starts, under its outline."""
        return self.y + self.outline_radius + 15

    @property
    def started(self) -> bool:
        """Whether the learner has answered any of its items (a star with a memory has a due)."""
        return any(star.state.due is not None for star in self.stars)

    @property
    def card_viewbox(self) -> str:
        """A window on the whole sky around this constellation alone: its phone card reuses the
        same circles, so the card costs no second layout."""
        half = sky.CONSTELLATION_RADIUS + CARD_MARGIN
        return f"{self.x - half:.1f} {self.y - half:.1f} {2 * half} {2 * half}"

    @property
    def card_origin(self) -> tuple[str, str]:
        half = sky.CONSTELLATION_RADIUS + CARD_MARGIN
        return f"{self.x - half:.1f}", f"{self.y - half:.1f}"

    @property
    def counts_in_words(self) -> str:
        """'2 lit, 3 kindled, 9 unlit of 14; 3 due, 1 missed': what was earned, then the rest."""
        earned = f"{self.lit} {sky.LIT}, {self.kindled} {sky.KINDLED}, {self.unlit} {sky.UNLIT}"
        others = [
            f"{count} {word}"
            for count, word in ((self.due, sky.DUE), (self.missed, sky.MISSED))
            if count
        ]
        return f"{earned} of {len(self.stars)}" + (f"; {', '.join(others)}" if others else "")

    @property
    def name_lines(self) -> list[str]:
        """The title in lines short enough for the whole sky's label width, so that no name is
        cut off: two lines, or three for the longest titles."""
        return wrap_words(self.title, CONSTELLATION_NAME_CHARS)


# Room around a constellation's outermost stars in its phone card, in sky units.
CARD_MARGIN = 10
# About as many characters of a constellation's name as fit one line under it in the whole sky
# (sky.LABEL_HALF_WIDTH on each side, at the 12-unit font of .constellation-name).
CONSTELLATION_NAME_CHARS = 28


def wrap_words(text: str, width: int) -> list[str]:
    """Text broken between words into lines of at most `width` characters (a longer word keeps
    a line to itself)."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


@functools.cache
def background_svg() -> str:
    """The sky's faint decorative stars as SVG, built once: the same on every page and visit."""
    return format_html_join(
        "",
        '<circle cx="{}" cy="{}" r="{}" opacity="{}"/>',
        sky.background_stars(),
    )


# A catalogue up to this many published lessons draws every lesson not started as a named
# outline that links to it; a larger one draws them as one faint path per subject, and names
# them in the table (/sky/table), one subject a page. The whole sky has room for about this many


OUTLINE_RADIUS = 6  # a lesson not started, in a summarised sky


def outlines(centres: list[tuple[float, float]]) -> SafeString:
    """One small ring per lesson as a single path: a move and two arcs each. Numbers alone, so
    safe as they are: escaping a large catalogue's path on every request would cost more than
    the rest of the page."""
    r = OUTLINE_RADIUS
    path = "".join(
        f"M{x - r:.0f} {y:.0f}a{r} {r} 0 1 0 {2 * r} 0a{r} {r} 0 1 0 -{2 * r} 0" for x, y in centres
    )
    return mark_safe(path)
