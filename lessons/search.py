"""Finding published lessons by words, with the database's own engine: the one place that
writes the search index and the one that reads it.

PostgreSQL: a weighted tsvector per lesson (title A, summary B, the lesson's texts C, its
questions' prompts and choices D) in `SearchEntry.vector`, GIN-indexed, asked with a websearch
query, ranked by `ts_rank`, snippets by `ts_headline`; "did you mean" by trigram similarity.
SQLite: an FTS5 table over the same columns, ranked by bm25 with weights in the same order,
snippets by `snippet()`; no "did you mean".

Both engines are asked the same question: the learner's words are parsed here once (quoted
phrases, -word exclusions, plain words ANDed, common English words dropped as PostgreSQL's
English configuration drops them) and written out for each engine, so the same content gives
the same lessons whatever the database, and no input can be read as the engine's own syntax.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from django.contrib.postgres.search import (
    SearchHeadline,
    SearchQuery,
    SearchRank,
    SearchVector,
    SearchVectorField,
    TrigramWordSimilarity,
)
from django.db import connection, models, transaction
from django.db.models import F, Func, Value
from django.db.models.functions import Concat, Greatest
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from lessons.models import Lesson, Question, SearchEntry
from lightmysky.lib.markdown import plain_text, text_for_twin

CONFIG = "english"
PER_PAGE = 20
MAX_QUERY_CHARS = 2000  # what a page echoes back; the search itself reads MAX_TERMS terms
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f]")


def typed_query(text: str) -> str:
    """A query as the search pages take it from the address: at most MAX_QUERY_CHARS, control
    characters (a NUL, a tab) read as spaces, so the page never echoes them."""
    return CONTROL_CHARACTERS.sub(" ", text[:MAX_QUERY_CHARS])


MAX_TERMS = 16  # words or phrases; a 2,000-character paste is cut to its first 16
MAX_WORD_CHARS = 60
# Around each match in a snippet, in control characters no lesson text holds: the text is
# escaped first, then they become <mark>, so a lesson's own "<" can never become markup.
MARK_START, MARK_END = "\x02", "\x03"
FTS_TABLE = "lessons_search_fts"
# bm25's column weights (title, summary, body, questions), in the order of PostgreSQL's
# default ts_rank weights for A, B, C, D (1.0, 0.4, 0.2, 0.1).
FTS_WEIGHTS = (10.0, 4.0, 2.0, 1.0)

# PostgreSQL's English stop words (tsearch_data/english.stop): it leaves them out of every
# vector and query, so FTS5 must not ask for them either.
_STOP_WORDS_TEXT = """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his
    himself she her hers herself it its itself they them their theirs themselves what which who
    whom this that these those am is are was were be been being have has had having do does did
    doing a an the and but if or because as until while of at by for with about against between
    into through during before after above below to from up down in out on off over under again
    further then once here there when where why how all any both each few more most other some
    such no nor not only own same so than too very s t can will just don should now"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())

TOKEN = re.compile(r'(-?)"([^"]*)"?|(-?)(\S+)')
WORD = re.compile(r"\w+")
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


# ---- The learner's words -------------------------------------------------------------------


@dataclass(frozen=True)
class Terms:
    """What to look for: each term a word or a phrase (a tuple of words), lower-cased."""

    include: tuple[tuple[str, ...], ...] = ()
    exclude: tuple[tuple[str, ...], ...] = ()
    cut: bool = False  # words past MAX_TERMS were left out

    def __bool__(self) -> bool:
        return bool(self.include)

    @property
    def words(self) -> list[str]:
        return [word for term in self.include for word in term]

    def fts5(self) -> str:
        """An FTS5 MATCH expression: every term a double-quoted string, so none of the
        learner's characters can be read as FTS5 syntax (AND, NEAR, *, ^, column filters)."""
        wanted = " ".join(_fts5_string(term) for term in self.include)
        unwanted = "".join(f" NOT {_fts5_string(term)}" for term in self.exclude)
        return f"({wanted}){unwanted}"

    def websearch(self) -> str:
        """The same terms for PostgreSQL's websearch_to_tsquery."""
        wanted = [_websearch_term(term) for term in self.include]
        return " ".join(wanted + [f"-{_websearch_term(term)}" for term in self.exclude])


def _fts5_string(term: tuple[str, ...]) -> str:
    return '"' + " ".join(term).replace('"', '""') + '"'


def _websearch_term(term: tuple[str, ...]) -> str:
    return f'"{" ".join(term)}"' if len(term) > 1 else term[0]


def parse(text: str) -> Terms:
    """The learner's words as terms: "quoted phrases", -excluded words, plain words. A word
    joined by punctuation (data-parallel, don't) is a phrase of its parts, as both engines read
    it; characters that are not letters or digits only separate words."""
    include: list[tuple[str, ...]] = []
    exclude: list[tuple[str, ...]] = []
    cut = False
    for match in TOKEN.finditer(CONTROL.sub(" ", text)):
        minus = match.group(1) or match.group(3)
        words = tuple(
            w[:MAX_WORD_CHARS]
            for w in WORD.findall((match.group(2) or match.group(4) or "").lower())
        )
        if not words or all(word in STOP_WORDS for word in words):
            continue
        if words in include or words in exclude:
            continue
        if len(include) + len(exclude) >= MAX_TERMS:
            cut = True
            break
        (exclude if minus else include).append(words)
    return Terms(tuple(include), tuple(exclude), cut)


# ---- Reading the index ---------------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    lesson: Lesson
    snippet_marked: str  # escaped nowhere yet: matches between MARK_START and MARK_END

    @property
    def snippet(self) -> SafeString:
        """The snippet as HTML: the text escaped, each match in <mark>."""
        html = escape(self.snippet_marked)
        return mark_safe(html.replace(MARK_START, "<mark>").replace(MARK_END, "</mark>"))  # noqa: S308

    @property
    def snippet_markdown(self) -> str:
        """The snippet as one line of Markdown, each match in **bold** (the twin's and the
        API's): the text escaped as the twins escape text, then the marks made bold."""
        text = text_for_twin(self.snippet_marked)
        return text.replace(MARK_START, "**").replace(MARK_END, "**")


@dataclass(frozen=True)
class Results:
    query: str
    terms: Terms
    hits: list[Hit] = field(default_factory=list)
    count: int = 0
    page: int = 1
    suggestion: str = ""

    @property
    def pages(self) -> int:
        return max(1, -(-self.count // PER_PAGE))

    @property
    def first(self) -> int:
        return (self.page - 1) * PER_PAGE + 1

    @property
    def last(self) -> int:
        return self.first + len(self.hits) - 1

    @property
    def message(self) -> str:
        """What to tell the learner when there is nothing to list, or less than they asked."""
        if not self.query.strip():
            return "Type a word or two to find a lesson, such as “pipeline bubble”."
        if not self.terms:
            return (
                "Those words are too common to search for (or only say what to leave out): "
                "add a word the lesson would use."
            )
        if self.terms.cut:
            return f"Only the first {MAX_TERMS} words were searched for."
        return ""


def search(query: str, *, page: int = 1, clamp_page: bool = True) -> Results:
    """Published lessons matching the learner's words, best first, PER_PAGE at a time, each
    with its subject and area and a snippet of where it matched. A page past the last shows
    the last, or, with clamp_page=False (the API, whose clients page until a page is empty),
    nothing. Three queries: count, the page, its lessons (a fourth on PostgreSQL when
    nothing matched: the suggestion)."""
    terms = parse(query)
    if not terms:
        return Results(query=query, terms=terms)
    engine = _postgres if connection.vendor == "postgresql" else _sqlite
    count = engine.count(terms)
    if count == 0:
        suggestion = engine.suggestion(terms)
        asked = 1 if clamp_page else page
        return Results(query=query, terms=terms, suggestion=suggestion, page=asked)
    pages = max(1, -(-count // PER_PAGE))
    if page > pages and not clamp_page:
        return Results(query=query, terms=terms, count=count, page=page)
    page = min(max(page, 1), pages)
    ranked = engine.page(terms, offset=(page - 1) * PER_PAGE, limit=PER_PAGE)
    lessons = (
        Lesson.objects.published()
        .select_related("subject", "area")
        .in_bulk([lesson_id for lesson_id, _ in ranked])
    )
    hits = [
        Hit(lessons[lesson_id], snippet) for lesson_id, snippet in ranked if lesson_id in lessons
    ]
    return Results(query=query, terms=terms, hits=hits, count=count, page=page)


def matching_lesson_ids(query: str, *, in_questions: bool = False, limit: int = 1000) -> list[int]:
    """The ids of the published lessons whose indexed text (title, summary, lesson, questions;
    or their questions alone) matches these words, up to `limit`: what the admin's lesson and
    question searches add to their own search of texts and ids, which also finds drafts (the
    index holds published lessons only)."""
    terms = parse(query)
    if not terms:
        return []
    engine = _postgres if connection.vendor == "postgresql" else _sqlite
    return engine.ids(terms, in_questions=in_questions, limit=limit)


class _postgres:
    @staticmethod
    def _query(terms: Terms) -> SearchQuery:
        return SearchQuery(terms.websearch(), search_type="websearch", config=CONFIG)

    @classmethod
    def count(cls, terms: Terms) -> int:
        return SearchEntry.objects.filter(vector=cls._query(terms)).count()

    @classmethod
    def ids(cls, terms: Terms, *, in_questions: bool, limit: int) -> list[int]:
        query = cls._query(terms)
        entries = SearchEntry.objects.filter(vector=query)
        if in_questions:  # the questions are the vector's D-weighted words
            questions_only = Func(
                F("vector"),
                template="ts_filter(%(expressions)s, '{d}')",
                output_field=SearchVectorField(),
            )
            entries = entries.annotate(questions_vector=questions_only).filter(
                questions_vector=query
            )
        rows = entries.values_list("lesson_id")
        return [lesson_id for (lesson_id,) in rows[:limit]]

    @classmethod
    def page(cls, terms: Terms, *, offset: int, limit: int) -> list[tuple[int, str]]:
        query = cls._query(terms)
        text = Concat(
            "summary", Value(" "), "body", Value(" "), "questions", output_field=models.TextField()
        )
        rows = (
            SearchEntry.objects.filter(vector=query)
            .annotate(
                rank=SearchRank(F("vector"), query),
                snippet=SearchHeadline(
                    text,
                    query,
                    config=CONFIG,
                    start_sel=MARK_START,
                    stop_sel=MARK_END,
                    max_words=30,
                    min_words=15,
                    max_fragments=2,
                    fragment_delimiter=" … ",
                ),
            )
            .order_by("-rank", "title", "lesson_id")
            .values_list("lesson_id", "snippet")[offset : offset + limit]
        )
        return list(rows)

    @staticmethod
    def suggestion(terms: Terms) -> str:
        """The learner's words with each typo replaced by the nearest word of the lessons whose
        titles or summaries are most like them (pg_trgm), or "" when nothing is close."""
        words = terms.words
        likeness = [
            TrigramWordSimilarity(word, field) for word in words for field in ("title", "summary")
        ]
        closest = Greatest(*likeness)  # two fields a word: never fewer than two
        near = (
            SearchEntry.objects.annotate(likeness=closest)
            .filter(likeness__gte=0.4)
            .order_by("-likeness")
            .values_list("title", "summary", "body", "questions")[:10]
        )
        vocabulary = {w for row in near for text in row for w in WORD.findall(text.lower())}
        if not vocabulary:
            return ""
        fixed = {
            word: (difflib.get_close_matches(word, vocabulary, n=1, cutoff=0.7) or [word])[0]
            for word in words
        }
        if all(word == fix for word, fix in fixed.items()):
            return ""
        corrected = Terms(
            tuple(tuple(fixed[w] for w in term) for term in terms.include), terms.exclude
        )
        return corrected.websearch()  # as a learner would type them


class _sqlite:
    RANK = f"bm25({FTS_TABLE}, {', '.join(str(w) for w in FTS_WEIGHTS)})"

    @staticmethod
    def count(terms: Terms) -> int:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT count(*) FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s",  # noqa: S608
                [terms.fts5()],
            )
            return cursor.fetchone()[0]

    @staticmethod
    def ids(terms: Terms, *, in_questions: bool, limit: int) -> list[int]:
        match = f"questions : ({terms.fts5()})" if in_questions else terms.fts5()
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s LIMIT %s",  # noqa: S608
                [match, limit],
            )
            return [row[0] for row in cursor.fetchall()]

    @classmethod
    def page(cls, terms: Terms, *, offset: int, limit: int) -> list[tuple[int, str]]:
        sql = (
            f"SELECT rowid, snippet({FTS_TABLE}, -1, %s, %s, ' … ', 24)"  # noqa: S608
            f" FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s"
            f" ORDER BY {cls.RANK}, title, rowid LIMIT %s OFFSET %s"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [MARK_START, MARK_END, terms.fts5(), limit, offset])
            return [(row[0], row[1]) for row in cursor.fetchall()]

    @staticmethod
    def suggestion(terms: Terms) -> str:
        return ""  # SQLite has no trigram similarity; FTS5's spellfix is not built in


# ---- Writing the index ---------------------------------------------------------------------


def _clean(text: str) -> str:
    return " ".join(CONTROL.sub(" ", text).split())


def entry_fields(lesson, questions: Iterable) -> dict[str, str]:
    """A lesson's texts as the index holds them (works on migrations' historical models too)."""
    body_parts = [
        lesson.heading,
        lesson.objectives,
        plain_text(lesson.body_html),
        plain_text(lesson.example_html),
        plain_text(lesson.tip_html),
        plain_text(lesson.recap_html),
        plain_text(lesson.transcript_html),
    ]
    question_parts = []
    for question in questions:
        question_parts.append(question.prompt)
        question_parts.extend(
            choice.get("text", "") for choice in question.choices if isinstance(choice, dict)
        )
    return {
        "title": _clean(lesson.title),
        "summary": _clean(lesson.summary),
        "body": _clean(" ".join(body_parts)),
        "questions": _clean(" ".join(str(part) for part in question_parts)),
    }


VECTOR = (
    SearchVector("title", weight="A", config=CONFIG)
    + SearchVector("summary", weight="B", config=CONFIG)
    + SearchVector("body", weight="C", config=CONFIG)
    + SearchVector("questions", weight="D", config=CONFIG)
)


def write_entries(entry_model, lessons: Sequence, questions_by_lesson: dict) -> None:
    """Replace the entries of `lessons` (published ones only): the one write path, for the
    signals, the rebuild and the migration that first fills the index."""
    entry_model.objects.filter(lesson_id__in=[lesson.pk for lesson in lessons]).delete()
    entry_model.objects.bulk_create(
        [
            entry_model(
                lesson_id=lesson.pk, **entry_fields(lesson, questions_by_lesson.get(lesson.pk, []))
            )
            for lesson in lessons
            if lesson.status == Lesson.Status.PUBLISHED
        ],
        batch_size=200,
    )
    if connection.vendor == "postgresql":
        entry_model.objects.filter(lesson_id__in=[lesson.pk for lesson in lessons]).update(
            vector=VECTOR
        )


def _questions_by_lesson(question_model, lesson_ids: Iterable[int]) -> dict[int, list]:
    by_lesson: dict[int, list] = {}
    questions = question_model.objects.filter(
        lesson_id__in=list(lesson_ids), retired_at__isnull=True
    ).order_by("lesson_id", "position")
    for question in questions.only("lesson_id", "prompt", "choices"):
        by_lesson.setdefault(question.lesson_id, []).append(question)
    return by_lesson


def refresh(lesson_ids: Iterable[int]) -> None:
    """Bring these lessons' entries up to date: a published lesson is (re)indexed, a draft or a
    deleted lesson leaves the index."""
    lesson_ids = set(lesson_ids)
    with transaction.atomic():
        SearchEntry.objects.filter(lesson_id__in=lesson_ids).delete()
        lessons = list(Lesson.objects.published().filter(pk__in=lesson_ids))
        if lessons:
            write_entries(SearchEntry, lessons, _questions_by_lesson(Question, lesson_ids))


# The lessons changed inside refreshed_once(), re-indexed as it ends (None: outside one).
_changed_lessons: ContextVar[set[int] | None] = ContextVar("changed_lessons", default=None)


@contextmanager
def refreshed_once() -> Iterator[None]:
    """Re-index the lessons whose searched texts change within it once, as it ends, instead of
    once for every row saved: a lesson file loads a lesson and its 8 questions row by row. It
    is one transaction, so an error undoes the rows and leaves the index as it was."""
    if _changed_lessons.get() is not None:
        yield  # an outer one re-indexes
        return
    changed: set[int] = set()
    token = _changed_lessons.set(changed)
    try:
        with transaction.atomic():
            yield
            if changed:
                refresh(changed)
    finally:
        _changed_lessons.reset(token)


def lessons_changed(lesson_ids: Iterable[int]) -> None:
    """Re-index these lessons now, or at the end of the refreshed_once() this runs within."""
    changed = _changed_lessons.get()
    if changed is None:
        refresh(lesson_ids)
    else:
        changed.update(lesson_ids)


def rebuild() -> int:
    """The whole index again from the published lessons (after a bulk load, which sends no
    signals); returns how many lessons it holds."""
    with transaction.atomic():
        SearchEntry.objects.all().delete()
        lessons = list(Lesson.objects.published())
        questions = _questions_by_lesson(Question, [lesson.pk for lesson in lessons])
        for start in range(0, len(lessons), 500):
            write_entries(SearchEntry, lessons[start : start + 500], questions)
    return len(lessons)
