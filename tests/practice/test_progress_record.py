"""/progress leads with what was learned: lessons started, stars ever lit, learned now, and
stars learned week by week; the data tools follow."""

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
    assert "Nothing learned yet: your first right answer kindles your first star." in html
    assert figures(html) == {} and 'class="week-chart"' not in html
    # The data tools are still there, below.
    assert html.index("What you have learned") < html.index("Take it with you")
    assert "Forget everything" in html


def test_an_active_learner_sees_their_first_star_learned_this_week(client, demo):
    answer(client, demo, right=True)
    answer(client, demo, right=False)
    html = client.get("/progress").content.decode()
    assert figures(html) == {"Lessons started": "1", "Stars ever lit": "0", "Learned now": "1"}
    rows = weeks(html)
    assert len(rows) == 12
    assert rows[-1][0].endswith("(this week)") and rows[-1][1] == "1"
    assert all(count == "0" for _, count in rows[:-1])
    assert html.index("What you have learned") < html.index("Take it with you")
    assert '<svg class="week-chart" viewBox="0 0 420 160" role="img"' in html


def test_a_returning_learner_keeps_the_week_they_learned_and_lights_stars(client, demo):
    now = timezone.now()
    with time_machine.travel(now - timedelta(days=15), tick=False):
        finish_round(client, demo, [True] * 8)
    with time_machine.travel(now, tick=False):
        before = client.get("/progress").content.decode()
        finish_round(client, demo, [True] * 8)
        after = client.get("/progress").content.decode()
    # Back after 15 days, everything is due: nothing is learned now, but the chart keeps the
    # week the 8 stars were first learned.
    assert figures(before) == {"Lessons started": "1", "Stars ever lit": "0", "Learned now": "0"}
    counts = [int(count) for _, count in weeks(before)]
    assert sum(counts) == 8 and counts[-1] == 0 and 8 in counts[-4:-1]
    # Remembered again on a later day, they light; a star first learned weeks ago is not
    # counted again this week.
    assert figures(after) == {"Lessons started": "1", "Stars ever lit": "8", "Learned now": "8"}
    assert [int(count) for _, count in weeks(after)] == counts
