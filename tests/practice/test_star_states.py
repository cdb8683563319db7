"""Each star state reached through real answers and time travel, as a browser reaches it.

What the answers earned (unlit, kindled, lit: sky.Evidence) and, apart from it, due and missed.
A lit star stays lit when it comes due; "stars lit at least once" never goes down.
"""

from __future__ import annotations

import importlib
import re
from datetime import datetime, timedelta

import time_machine
from django.apps import apps
from django.test import Client
from django.utils import timezone

from practice import sky
from practice.models import Learner, Memory
from tests.practice.helpers import (
    asked_again_as_practice,
    asked_question_or_none,
    counter_text,
    current_question,
    exported,
    finish_round,
    form_token,
    practice_url,
    right_choices,
    wrong_choices,
)
from tests.practice.test_progress import upload


def stars(html: str, lesson) -> dict[int, tuple[str, str]]:
    """The lesson's question stars on a page: number -> (drawn class, accessible name)."""
    found = {}
    pattern = (
        r'<circle class="star (\w+)[^"]*"[^>]*role="img"><title>Question (\d+) of '
        + re.escape(lesson.title)
        + r": ([^<]*)</title>"
    )
    for drawn, number, words in re.findall(pattern, html):
        found[int(number)] = (drawn, words)
    return found


def words(html: str, lesson) -> list[str]:
    """Each question's evidence word, in question order, from its accessible name."""
    return [
        re.split("[,:]", described)[0] for _, (_, described) in sorted(stars(html, lesson).items())
    ]


def memories(client: Client) -> list[Memory]:
    learner = Learner.objects.get(public_id=client.session["learner"])
    return list(Memory.objects.filter(learner=learner).order_by("question__position"))


def review_all(client: Client, *, miss: set[int] = frozenset()) -> None:
    """Answer everything /review asks, missing the questions at these positions, and then
    answering right each miss it asks again at the end of the set (practice)."""
    for _ in range(40):
        page = client.get("/review")
        question = asked_question_or_none(page)
        if question is None:
            return
        wrong = question.position in miss and not asked_again_as_practice(page)
        letters = wrong_choices(question) if wrong else right_choices(question)
        response = client.post("/review", {"token": form_token(page), "choice": letters})
        assert response.status_code == 302
    raise AssertionError("/review kept asking")


def test_a_new_browser_answering_the_seed_round_right_sees_kindled_stars_not_lit(client, demo):
    before = client.get("/sky").content.decode()
    # Not started: an outline with its name, no stars counted as unlit.
    assert words(before, demo) == []
    assert f'aria-label="{demo.title}: not started"' in before
    finish_round(client, demo, [True] * 8)

    html = client.get("/sky").content.decode()
    assert set(words(html, demo)) == {"kindled"}
    assert all(drawn == "kindled" for drawn, _ in stars(html, demo).values())
    assert stars(html, demo)[1][1] == "kindled: next review in 2 days"
    assert "<strong>0 lit · 8 kindled</strong> · 0 due" in html
    assert (
        counter_text(html) == "Your sky: 8 kindled"
    )  # the header: what was earned, then what is due
    lesson_page = client.get(demo.get_absolute_url()).content.decode()
    assert "<strong>0 lit, 8 kindled</strong>" in lesson_page
    # Its stars are more than its eight questions: the caption says what they stand for.
    cards = demo.flashcards.count()
    assert f"of {8 + cards} stars: 8 questions, {cards} flashcards</span>" in lesson_page
    table = client.get("/sky/table").content.decode()
    assert table.count("<td>kindled</td>") == 8 and "<td>lit</td>" not in table
    assert {item["star"] for item in exported(client)["items"]} == {"kindled"}
    assert all(memory.lit_at is None for memory in memories(client))
    end = client.get(practice_url(demo) + "?summary=1").content.decode()
    assert "This round kindled <strong>8 stars</strong>." in end
    # When they can light, as the rule has it: a second right answer is not enough.
    assert (
        "A kindled star lights after more right answers in a row, spread over a day or more, "
        "so that a lucky guess is unlikely: a new question with four choices needs 3 in all, "
        "its first included, and each wrong answer before it lights adds up to two more."
    ) in end
    assert "flashcard" not in end.split('class="round-stars"')[1].split("</p>")[0]
    assert "Until it is lit, each comes back within 3 days" in end


def test_right_answers_on_two_days_light_the_stars_a_lucky_guess_could_not(client, demo):
    """One round, another the same evening, a third the next evening: eight right answers a
    question, three in a row on two days, which at random happen one time in 64."""
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        finish_round(client, demo, [True] * 8)
    with time_machine.travel(start + timedelta(hours=23), tick=False):
        finish_round(client, demo, [True] * 8)  # the round again, the same day
        assert set(words(client.get("/sky").content.decode(), demo)) == {"kindled"}
    later = start + timedelta(hours=47)
    with time_machine.travel(later, tick=False):
        finish_round(client, demo, [True] * 8)
        end = client.get(practice_url(demo) + "?summary=1").content.decode()
        assert "This round lit <strong>8 stars</strong>." in end
        html = client.get("/sky").content.decode()
        assert set(words(html, demo)) == {"lit"}
        assert all(drawn == "lit" for drawn, _ in stars(html, demo).values())
        assert "<strong>8 lit · 0 kindled</strong> · 0 due" in html
        home = client.get("/").content.decode()
        assert "<strong>8 lit · 0 kindled · 0 due</strong>" in home
    assert {memory.lit_at for memory in memories(client)} == {later}


def test_kindled_stars_come_back_within_three_days_and_reviews_light_them(client, demo):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        finish_round(client, demo, [True] * 8)
    with time_machine.travel(start + timedelta(days=3), tick=False):
        html = client.get("/sky").content.decode()
        assert set(words(html, demo)) == {"kindled"}
        assert all(drawn == "kindled" for drawn, _ in stars(html, demo).values())
        assert stars(html, demo)[1][1].startswith("kindled, due: came due ")
        assert counter_text(html) == "Your sky: 8 kindled · 8 due"  # nothing earned is lost to time
        review_all(client)
        assert set(words(client.get("/sky").content.decode(), demo)) == {"kindled"}
    assert all(m.due <= start + timedelta(days=6) for m in memories(client))
    with time_machine.travel(start + timedelta(days=6), tick=False):
        review_all(client)
        html = client.get("/sky").content.decode()
        assert set(words(html, demo)) == {"lit"}
        assert "Stars lit at least once: 8" in html


def test_a_miss_then_a_right_retry_leaves_the_star_unlit_and_missed(client, demo):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        finish_round(client, demo, [False] + [True] * 7 + [True])  # the last: q1's retry
        html = client.get("/sky").content.decode()
        assert stars(html, demo)[1] == ("unlit", "unlit, missed: next review in 1 day")
        assert words(html, demo)[1:] == ["kindled"] * 7
        assert "<strong>0 lit · 7 kindled</strong> · 0 due" in html and "1 missed" in html
        first = memories(client)[0]
        assert (first.evidence, first.lit_at, first.missed) == (sky.NO_EVIDENCE, None, True)
        assert exported(client)["items"][0]["star"] == "unlit, missed"
    with time_machine.travel(start + timedelta(days=1, minutes=1), tick=False):
        html = client.get("/sky").content.decode()
        assert stars(html, demo)[1][1] == "unlit, due, missed: came due under an hour ago"
        assert counter_text(html) == "Your sky: 7 kindled · 1 due"
        review_all(client)  # right a day after the miss: kindled, never lit by itself
        assert stars(client.get("/sky").content.decode(), demo)[1][0] == "kindled"


def test_a_right_answer_marked_as_a_guess_lights_nothing_and_is_no_miss(client, demo):
    question, token = current_question(client, practice_url(demo))
    client.post(
        practice_url(demo), {"token": token, "choice": right_choices(question), "guessed": "yes"}
    )
    html = client.get("/sky").content.decode()
    drawn, described = stars(html, demo)[1]
    assert drawn == "unlit" and "missed" not in described
    assert described.startswith("unlit: next review in")
    assert counter_text(html) == "Your sky"
    assert memories(client)[0].missed is False


def light_every_question(client: Client, demo) -> datetime:
    """Three rounds right over two days light the lesson's eight question stars; when the
    last of them comes due."""
    start = timezone.now()
    for hours in (0, 23, 47):
        with time_machine.travel(start + timedelta(hours=hours), tick=False):
            finish_round(client, demo, [True] * 8)
    return max(memory.due for memory in memories(client))


def test_lit_stars_stay_lit_when_they_come_due_and_ever_lit_never_drops(client, demo):
    due_at = light_every_question(client, demo)
    with time_machine.travel(due_at + timedelta(minutes=1), tick=False):
        html = client.get("/sky").content.decode()
        assert set(words(html, demo)) == {"lit"}  # lit, and due
        assert "<strong>8 lit · 0 kindled</strong> · 8 due" in html
        review_all(client, miss={1, 2, 3})  # three forgotten, five remembered
        html = client.get("/sky").content.decode()
        assert words(html, demo) == ["unlit"] * 3 + ["lit"] * 5
        assert "<strong>5 lit · 0 kindled</strong> · 0 due" in html
        assert "Stars lit at least once: 8" in html
    with time_machine.travel(due_at + timedelta(days=400), tick=False):
        html = client.get("/sky").content.decode()
        assert words(html, demo) == ["unlit"] * 3 + ["lit"] * 5
        assert counter_text(html) == "Your sky: 5 lit · 8 due"


def test_a_lit_star_put_out_by_a_miss_or_a_guess_is_told_so(client, demo):
    """The header's lit count falls by the stars a wrong answer or "I guessed" put out: the
    verdict, the live region and the set's end each say which went out, and the words page
    says a lit star lasts until either."""
    due_at = light_every_question(client, demo)
    with time_machine.travel(due_at + timedelta(minutes=1), tick=False):
        verdicts, reasked = {}, {}
        for _ in range(12):
            page = client.get("/review")
            question = asked_question_or_none(page)
            if question is None:
                break
            post = {"token": form_token(page), "choice": right_choices(question)}
            if question.position == 1 and not asked_again_as_practice(page):
                post["choice"] = wrong_choices(question)
            if question.position == 2:
                post["guessed"] = "yes"
            verdict = client.post("/review", post, follow=True).content.decode()
            verdicts.setdefault(question.position, verdict)
            if asked_again_as_practice(page):
                reasked[question.position] = page.content.decode()
        for position in (1, 2):
            assert "Star unlit</p>" in verdicts[position]
            status = re.search(r'id="answer-status"[^>]*>(.*?)</p>', verdicts[position])
            assert status and " Star unlit." in status.group(1)
        assert "Star unlit" not in verdicts[3]
        # Both come back once at the set's end, each with its own reason.
        assert "you missed this one in this set" in reasked[1]
        assert "you marked this one as a guess in this set" in reasked[2]
        end = client.get("/review").content.decode()
        assert (
            "<strong>2 stars</strong> are unlit after a wrong answer or a guess, until right "
            "answers kindle them again and light them."
        ) in end
        assert words(client.get("/sky").content.decode(), demo)[:3] == ["unlit", "unlit", "lit"]
    assert "until a wrong answer or an answer you mark" in client.get("/sky/words").content.decode()


def test_each_verdict_says_truly_how_many_right_answers_still_light_its_star(client, demo):
    """Missed in the first round, question 1 is told how many right answers in a row
    light its star; answered right each time it comes back, the count falls by one an answer
    and the star lights exactly when it reaches none."""
    said = []

    def verdict_of(html: str) -> str:
        if "Star lit</p>" in html:
            return "lit"
        found = re.search(r'<p class="reward-next">(\d+) more right answers?', html)
        return found.group(1) if found else "nothing"

    finish_round(client, demo, [False] + [True] * 7)  # (and its retry, as practice)
    said.append(verdict_of(client.get(practice_url(demo) + "?answered=1").content.decode()))
    for _ in range(8):
        first = memories(client)[0]
        with time_machine.travel(first.due + timedelta(minutes=1), tick=False):
            while (page := client.get("/review")) and (question := asked_question_or_none(page)):
                post = {"token": form_token(page), "choice": right_choices(question)}
                verdict = client.post("/review", post, follow=True).content.decode()
                if question.position == 1 and not asked_again_as_practice(page):
                    said.append(verdict_of(verdict))
        if said[-1] == "lit":
            break
    counts = [int(count) for count in said[:-1]]
    assert said[-1] == "lit" and counts == list(range(len(counts), 0, -1)), said
    assert counts[0] == 4  # a miss first: four right answers in a row light it


def test_the_export_and_import_round_trip_keeps_the_evidence(client, demo):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        finish_round(client, demo, [False] + [True] * 7 + [True])
    with time_machine.travel(start + timedelta(days=1, hours=1), tick=False):
        finish_round(client, demo, [True] * 8)
    with time_machine.travel(start + timedelta(days=2, hours=2), tick=False):
        finish_round(client, demo, [True] * 4 + [False] * 4 + [True] * 4)

        def kept(browser: Client) -> list[tuple]:
            return [
                (m.question_id, m.evidence, m.missed, m.streak_since, m.lit_at)
                + (round(m.evidence_score, 9),)
                for m in memories(browser)
            ]

        document = exported(client)
        expected = kept(client)
        levels = {m.evidence for m in memories(client)}
        assert levels == {sky.CONFIRMED, sky.KINDLING, sky.NO_EVIDENCE}
        fresh = Client()
        assert upload(fresh, document).status_code == 200
        assert kept(fresh) == expected
        # A file from before the flags existed: the same flags, replayed from its reviews.
        for item in document["items"]:
            for name in ("star", "evidence", "lit_at"):
                del item[name]
        older = Client()
        assert upload(older, document).status_code == 200
        assert kept(older) == expected
        html = client.get("/sky").content.decode()
        for other in (fresh, older):
            assert words(other.get("/sky").content.decode(), demo) == words(html, demo)


def test_the_migration_replays_what_answering_stored(client, demo):
    start = timezone.now()
    for hours, pattern in ((0, [False] + [True] * 7 + [False]), (25, [True] * 8), (50, [True] * 8)):
        with time_machine.travel(start + timedelta(hours=hours), tick=False):
            finish_round(client, demo, pattern)
    fields = ("pk", "evidence", "evidence_score", "streak_since", "lit_at", "missed")
    stored = [tuple(getattr(m, name) for name in fields) for m in memories(client)]
    assert {row[1] for row in stored} == {sky.KINDLING, sky.CONFIRMED}
    Memory.objects.update(evidence=sky.NO_EVIDENCE, evidence_score=0, lit_at=None)
    migration = importlib.import_module("practice.migrations.0010_evidence_score_and_star_change")
    migration.replay_evidence(apps, None)
    replayed = [tuple(getattr(m, name) for name in fields) for m in memories(client)]
    assert [row[:2] + row[3:] for row in replayed] == [row[:2] + row[3:] for row in stored]
    assert [round(r[2], 9) for r in replayed] == [round(r[2], 9) for r in stored]


def test_agents_read_the_same_five_words(client, demo):
    instructions = client.get("/agent-instructions.md").content.decode()
    for word in sky.WORDS:
        assert f"**{word}**" in instructions
    words_twin = client.get("/sky/words.md").content.decode()
    for word in sky.WORDS:
        assert f"- **{word}**: {sky.MEANINGS[word]}" in words_twin
    assert sky.RULE in words_twin
    twin = client.get(demo.get_absolute_url() + ".md").content.decode()
    assert "unlit, kindled or lit, and apart from that due or missed" in twin


def test_one_page_defines_the_words_and_every_page_links_to_it(client, demo):
    page = client.get("/sky/words").content.decode()
    for word in sky.WORDS:
        assert f"<strong>{word.capitalize()}</strong>: " in page
    assert "at most a 5 % chance" in page
    for path in ("/", demo.get_absolute_url(), practice_url(demo), "/review", "/sky", "/progress"):
        assert '<a href="/sky/words">' in client.get(path).content.decode(), path
