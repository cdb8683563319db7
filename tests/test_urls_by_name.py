"""Every address the site gives is built from its URL name (`{% url %}`, `reverse()`, the
lesson's `get_*_url()`), so a route changes in its urls.py alone. Read from the source: a new
hand-written path fails here with its file and line."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from django.urls import get_resolver

from lessons.models import Lesson
from tests.factories import make_lesson

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("lessons", "practice", "lightmysky")

# Paths matched by prefix before any URL is resolved, so they have no name to reverse: the
# health probes are answered before routing, and the middleware sorts requests by prefix.
MATCHED_BEFORE_ROUTING = {
    "lightmysky/health.py": {"/healthz", "/readyz", "/metrics"},
    "lightmysky/middleware.py": {
        "/api/",
        "/admin/",
        "/openapi.json",
        "/llms",
        "/.well-known/",
        "/index.md",
    },
}

# A quoted path in a template (`href="/review"`, `with next_url="/review"`); `"/>` closes a tag.
TEMPLATE_PATH = re.compile(r'=\s*"/(?!/)(?=[\w."?#])')
# A path written after SITE_URL, unless it is a pattern with {placeholders} for agents to fill.
AFTER_SITE_URL = re.compile(r"\{\{ *SITE_URL *\}\}/(?![^\s`)]*(?<!\{)\{\w+\}(?!\}))")
# A lesson or subject page's address (or the twins' page_url) with a path added by hand instead
# of its get_*_url().
ADDED_TO_URL = re.compile(r"get_absolute_url *(\}\}[/.]|\|add:)|page_url *\}\}/")


def site_segments() -> set[str]:
    """The fixed words of the site's page routes (`review`, `practice`, `llms.txt`…); the admin's
    and the API's routes are written by Django and django-ninja from their own definitions."""
    words: set[str] = set()

    def walk(resolver, prefix: str) -> None:
        for pattern in resolver.url_patterns:
            route = prefix + str(pattern.pattern)
            if hasattr(pattern, "url_patterns"):
                if pattern.namespace not in ("admin", "api"):
                    walk(pattern, route)
            else:
                fixed = re.sub(r"\(\?P<\w+>|<[^>]*>|\[[^\]]*\]|\{[^}]*\}|\\.", " ", route)
                words.update(re.findall(r"[a-z][\w.-]*", fixed))

    walk(get_resolver(), "")
    return words


def test_templates_write_no_site_path():
    found = []
    for path in sorted((ROOT / "templates").rglob("*")):
        if not path.is_file():
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for pattern in (TEMPLATE_PATH, AFTER_SITE_URL, ADDED_TO_URL):
                if pattern.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}")
    assert found == []


def code_strings(tree: ast.AST):
    """String literals that are code, not docstrings nor an API route's own definition
    (`@router.get("/search")`, which django-ninja writes out): each with its line."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    api_routes = {
        id(node.args[0])
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "router"
        and node.args
    }
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings | api_routes
        ):
            yield node.lineno, node.value


def added_to_page_url(tree: ast.AST):
    """`lesson.get_absolute_url() + "/practice"` and `f"{lesson.get_absolute_url()}.md"`."""

    def is_page_url(node: ast.AST) -> bool:
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr.startswith("get_")
            and node.func.attr.endswith("_url")
        )

    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and is_page_url(node.left):
            right = node.right
            if isinstance(right, ast.Constant) and str(right.value)[:1] in "/.":
                yield node.lineno, right.value
        if isinstance(node, ast.JoinedStr):
            for before, after in zip(node.values, node.values[1:], strict=False):
                if (
                    isinstance(before, ast.FormattedValue)
                    and is_page_url(before.value)
                    and isinstance(after, ast.Constant)
                    and str(after.value)[:1] in "/."
                ):
                    yield node.lineno, after.value


def test_python_source_writes_no_site_path():
    segments = "|".join(re.escape(word) for word in sorted(site_segments(), key=len, reverse=True))
    site_path = re.compile(rf"(?<![\w/.:~-])/(?:{segments})(?=$|[/?#.\s]|\.md)")
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = str(path.relative_to(ROOT))
            if path.name == "urls.py" or "/migrations/" in name:
                continue
            allowed = MATCHED_BEFORE_ROUTING.get(name, set())
            tree = ast.parse(path.read_text(), name)
            for line, text in code_strings(tree):
                if site_path.search(text) and text not in allowed:
                    found.append(f"{name}:{line}: {text!r}")
            for line, text in added_to_page_url(tree):
                found.append(f"{name}:{line}: page address + {text!r}")
    assert found == []


def test_the_scan_knows_the_site_routes():
    """The scan above finds nothing only because the source is clean, not because it is blind."""
    assert {"review", "progress", "sky", "practice", "flashcards", "report", "llms.txt"} <= (
        site_segments()
    )
    assert TEMPLATE_PATH.search('<a href="/review">') and TEMPLATE_PATH.search('href="/"')
    assert not TEMPLATE_PATH.search('<rect rx="10"/>')
    assert AFTER_SITE_URL.search("{{ SITE_URL }}/llms.txt")
    assert not AFTER_SITE_URL.search("`GET {{ SITE_URL }}/api/v1/lessons/{id}`")
    assert list(added_to_page_url(ast.parse('lesson.get_absolute_url() + "/practice"')))


@pytest.mark.django_db
def test_every_lesson_address_helper_leads_to_its_page(client):
    lesson = make_lesson(status=Lesson.Status.PUBLISHED)
    pages = {
        lesson.get_absolute_url(): "text/html",
        lesson.get_markdown_url(): "text/markdown",
        lesson.subject.get_markdown_url(): "text/markdown",
        lesson.get_practice_url(): "text/html",
        lesson.get_flashcards_url(): "text/html",
        lesson.get_worksheet_url(): "text/html",
        lesson.get_worksheet_answers_url(): "text/html",
        lesson.get_report_url(): "text/html",
    }
    for url, media_type in pages.items():
        response = client.get(url)
        assert (response.status_code, response["Content-Type"].split(";")[0]) == (200, media_type)
    assert len(set(pages)) == len(pages)
