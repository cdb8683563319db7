"""/progress leads with the learner's stars: lessons started, lit, kindled and due, and stars
first lit week by week; the data tools follow."""

from __future__ import annotations

import re
from datetime import timedelta

import time_machine
from django.utils import timezone

from tests.practice.helpers import answer, finish_round


def figures(html: str) -> dict[str, str]:
    return dict(re.findall(r"<div><dt>([^<]*)</dt><dd>([^<]*)</dd></div>", html))


def weeks(html: str) -> list[tuple[str, str]]:
    table = html[html.index('<table class="week-table">') :]
    table = table[: table.index("</table>")]
    return re.findall(r"<tr><td>([^<]*)</td><td>(\d+)</td></tr>", table)


def test_a_new_browser_is_told_nothing_is_learned_yet(client, demo):
    html = client.get("/progress").content.decode()
    assert "Nothing yet: your first right answer kindles your first star." in html
    assert figures(html) == {} and 'class="week-chart"' not in html
    # The data tools are still there, below.
    assert html.index("Your stars") < html.index("Take it with you")
    assert "Forget everything" in html


def test_an_active_learner_sees_their_stars_and_the_weeks_they_first_lit(client, demo):
    answer(client, demo, right=True)
    answer(client, demo, right=False)
    html = client.get("/progress").content.decode()
    assert figures(html) == {"Lessons started": "1", "Lit": "0", "Kindled": "1", "Due": "0"}
    # No star has lit: a sentence says what will show, not an empty chart.
    assert "No star has lit yet" in html and 'class="week-chart"' not in html
    assert html.index("Your stars") < html.index("Take it with you")


def test_the_weeks_go_back_twelve_weeks_at_most(client, demo):
    now = timezone.now()
    for days_ago in (200, 199, 197):  # stars lit 197 days ago
        with time_machine.travel(now - timedelta(days=days_ago), tick=False):
            finish_round(client, demo, [True] * 8)
    html = client.get("/progress").content.decode()
    assert len(weeks(html)) == 12


def test_a_returning_learner_keeps_what_was_earned_and_lights_stars(client, demo):
    now = timezone.now()
    for days_ago in (16, 15):
        with time_machine.travel(now - timedelta(days=days_ago), tick=False):
            finish_round(client, demo, [True] * 8)
    with time_machine.travel(now, tick=False):
        before = client.get("/progress").content.decode()
        finish_round(client, demo, [True] * 8)
        after = client.get("/progress").content.decode()
    # Back after 15 days, everything is due, and still kindled: nothing earned was lost.
    assert figures(before) == {"Lessons started": "1", "Lit": "0", "Kindled": "8", "Due": "8"}
    assert "No star has lit yet" in before
    # A third right answer, on another day: they light, this week.
    assert figures(after) == {"Lessons started": "1", "Lit": "8", "Kindled": "0", "Due": "0"}
    assert '<svg class="week-chart" viewBox="0 0 420 160" role="img"' in after
    counts = [int(count) for _, count in weeks(after)]
    assert counts[-1] == 8 and sum(counts) == 8
    assert len(counts) in (3, 4)  # from the week of the first answer, 16 days ago
