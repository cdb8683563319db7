"""axe-core (bundled with axe-playwright-python, run inside the page) finds no WCAG 2.2 A/AA
violation on any page, in light and in dark mode."""

from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe

from tests.browser.pages import PAGES, WCAG_TAGS, open_page
from tests.conftest import SEED_PATH

axe = Axe()


def describe(violations: list[dict]) -> str:
    lines = []
    for violation in violations:
        targets = [node["target"] for node in violation["nodes"]][:3]
        lines.append(f"{violation['id']}: {violation['help']} at {targets}")
    return "\n".join(lines)


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("name", list(PAGES))
def test_no_wcag_violations(browser, live_server, seed, name, scheme):
    context = browser.new_context(color_scheme=scheme)
    page = context.new_page()
    open_page(page, live_server.url, name)
    results = axe.run(page, options={"runOnly": {"type": "tag", "values": WCAG_TAGS}})
    violations = results.response["violations"]
    context.close()
    assert not violations, describe(violations)


@pytest.mark.parametrize("path", ["/", "/sky", "/progress", SEED_PATH + "/worksheet"])
def test_focus_is_always_visible(page, live_server, seed, path):
    page.goto(live_server.url + path)
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement === document.body"):
            break
        outline = page.evaluate(
            "() => { const s = getComputedStyle(document.activeElement);"
            " return [s.outlineStyle, parseFloat(s.outlineWidth)]; }"
        )
        assert outline[0] != "none" and outline[1] >= 2, page.evaluate(
            "document.activeElement.outerHTML"
        )
