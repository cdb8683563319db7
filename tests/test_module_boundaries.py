"""Which code may import which: read from the source, so a new import that crosses a line fails."""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from types import FrameType

from django.urls import resolve

from tests.practice.helpers import answer, current_question, practice_url, right_choices

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
            # `from package import module` imports a module too.
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def crossings(paths: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    return [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in paths
        for module in sorted(imported_modules(path))
        if module.split(".")[0] in forbidden
    ]


def module_path(module: str) -> Path | None:
    """The project's file for a module name, or None for a module from elsewhere."""
    base = ROOT.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def reached(path: Path) -> set[str]:
    """Every project module a file imports, directly or through the project modules it
    imports."""
    found: set[str] = set()
    waiting = [path]
    while waiting:
        for module in imported_modules(waiting.pop()):
            if module not in found and (found_path := module_path(module)):
                found.add(module)
                waiting.append(found_path)
    return found


def test_the_site_library_reaches_nothing_of_the_site_but_itself():
    """lightmysky/lib is the site's own library: nothing in it imports an app, the site's
    models or any other module of the project, directly or through another module."""
    library = sorted((ROOT / "lightmysky" / "lib").glob("*.py"))
    assert {
        f"{path.relative_to(ROOT)} reaches {module}"
        for path in library
        for module in reached(path)
        if not module.startswith("lightmysky.lib")
    } == set()


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


def modules_run_by_view(client, path: str, data: dict) -> set[str]:
    """The project's modules whose code runs while the view that `path` resolves to answers a
    POST of `data`: from the view's call to its return, without the middleware around it."""
    view = resolve(path).func
    ran: set[str] = set()
    inside: list[FrameType] = []

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and not inside and frame.f_code is view.__code__:
            inside.append(frame)
        elif event == "return" and inside and frame is inside[0]:
            inside.clear()
        elif event == "call" and inside:
            path = Path(frame.f_code.co_filename)
            if path.is_relative_to(ROOT) and path.parts[len(ROOT.parts)] in PROJECT:
                ran.add(path.relative_to(ROOT).as_posix())

    sys.setprofile(profile)
    try:
        response = client.post(path, data)
    finally:
        sys.setprofile(None)
    assert response.status_code == 302, response
    return ran


PROJECT = ("lessons", "practice", "lightmysky")


def test_an_answer_runs_through_few_modules(client, demo):
    """An answer goes view → submission parsing → one service call → response: the view, the
    rate limit (with the client's address), the form's parsing (and the question's grading), the
    service, the models, the scheduler and the star rule. Nothing else of the project's runs in
    it."""
    answer(client, demo, right=True)
    question, token = current_question(client, practice_url(demo))
    ran = modules_run_by_view(
        client, practice_url(demo), {"token": token, "choice": right_choices(question)}
    )
    assert ran == {
        "practice/views.py",
        "lightmysky/ratelimit.py",
        "lightmysky/lib/addresses.py",
        "practice/submissions.py",
        "lessons/models.py",
        "practice/services.py",
        "practice/models.py",
        "practice/scheduling.py",
        "practice/sky.py",
    }
