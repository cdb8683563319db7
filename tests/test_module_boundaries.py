"""Which code may import which: read from the source, so a new import that crosses a line fails."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = ("lessons", "practice")


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def crossings(paths: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    return [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in paths
        for module in sorted(imported_modules(path))
        if module.split(".")[0] in forbidden
    ]


def test_the_site_library_imports_no_app():
    assert crossings(sorted((ROOT / "lightmysky" / "lib").glob("*.py")), APPS) == []


def test_settings_import_no_app_and_no_site_library():
    path = ROOT / "lightmysky" / "settings.py"
    assert crossings([path], APPS) == []
    assert not any(m.startswith("lightmysky.lib") for m in imported_modules(path))


# The lesson page, the home page and the subject pages show the learner's stars beside the
# content: lessons/views.py is where the two apps meet. Everything else in lessons asks about
# learners through lessons.learner_data, which the practice app answers.
COMPOSITION_POINTS = {"views.py"}


def test_content_code_never_imports_practice():
    lessons = [
        path
        for path in sorted((ROOT / "lessons").rglob("*.py"))
        if "migrations" not in path.parts and path.name not in COMPOSITION_POINTS
    ]
    assert crossings(lessons, ("practice",)) == []


def test_practice_imports_no_lessons_view():
    practice = [p for p in sorted((ROOT / "practice").rglob("*.py")) if "migrations" not in p.parts]
    assert [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in practice
        for module in sorted(imported_modules(path))
        if module.startswith("lessons.views")
    ] == []
