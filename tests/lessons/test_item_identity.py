"""A question and each of its choices keep their identity through any edit in the admin: the
identity follows the form's row, never the text or the place. Replacing a question is an
action of its own, and typing another question over an answered one is asked about. (The
editors' review of 2026-12-05, D2 and D3.)"""

from __future__ import annotations

import re
from html import unescape

from django.test import Client

from lessons.models import Lesson, Question
from practice.models import Memory, Review
from tests.lessons.test_admin import change_page_data, question_page_data
from tests.practice.helpers import answer, exported, finish_round

CHANGE = "/admin/lessons/lesson/{}/change/"


def slot_of_right(data: dict, prefix: str = "") -> int:
    return next(n for n in range(6) if data.get(f"{prefix}choice_{n}_correct"))


def swap_rows(data: dict, a: int, b: int, prefix: str = "", parts=("text", "correct", "why", "id")):
    for part in parts:
        first, second = f"{prefix}choice_{a}_{part}", f"{prefix}choice_{b}_{part}"
        data[first], data[second] = data.get(second), data.get(first)
    return {k: v for k, v in data.items() if v is not None}


def test_moving_a_choice_with_its_row_and_fixing_its_typo_keeps_the_right_answer(
    editor_client, demo
):
    """D3 in the admin: swap two choices (Move up/down carries the row's hidden id along) and
    fix a typo in the right one, in one save: no question asked, memory kept."""
    answer(Client(), demo, right=True)
    question = demo.questions.get(position=1)
    right_id = next(iter(question.correct_ids))
    data = question_page_data(editor_client, question)
    right = slot_of_right(data)
    other = 0 if right else 1
    data = swap_rows(data, right, other)
    data[f"choice_{other}_text"] += " (typo fixed)"
    response = editor_client.post(f"/admin/lessons/question/{question.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:3000]
    question.refresh_from_db()
    assert question.correct_ids == {right_id}
    assert question.choices[other]["id"] == right_id
    assert question.choices[other]["text"].endswith("(typo fixed)")
    assert Memory.objects.filter(question=question).count() == 1


def test_a_choice_typed_into_another_row_is_asked_about_with_the_true_before_and_after(
    editor_client, demo
):
    """Without moving the rows (no JavaScript), retyping choices into other rows moves the tick
    to another choice: the confirmation says which choice that is, as it read before."""
    answer(Client(), demo, right=True)
    question = demo.questions.get(position=1)
    data = question_page_data(editor_client, question)
    right = slot_of_right(data)
    other = 0 if right else 1
    before = {n: data[f"choice_{n}_text"] for n in (right, other)}
    data = swap_rows(data, right, other, parts=("text", "correct", "why"))
    data[f"choice_{other}_text"] += " (typo fixed)"
    page = editor_client.post(f"/admin/lessons/question/{question.pk}/change/", data)
    html = page.content.decode()
    assert page.status_code == 200 and "Before saving" in html
    assert (
        f"the right answer was “{before[right]}”, now “{before[right]} (typo fixed)” "
        f"(the choice that read “{before[other]}”)" in html.replace("&#x27;", "'")
    ), html[html.find("right answer was") - 100 : html.find("right answer was") + 400]


def replaced_question_data(data: dict, index: int) -> dict:
    prefix = f"questions-{index}-"
    data[prefix + "prompt"] = "How many requests can a full bucket of 5 tokens let through at once?"
    texts = ["5", "1", "10", "None"]
    for slot, text in enumerate(texts):
        data[f"{prefix}choice_{slot}_text"] = text
        data.pop(f"{prefix}choice_{slot}_correct", None)
        data[f"{prefix}choice_{slot}_why"] = "" if slot == 0 else "Each token lets one through."
    data[f"{prefix}choice_0_correct"] = "on"
    data[prefix + "explanation"] = "Each of the 5 tokens lets one request through at once."
    return data


def test_replace_this_question_retires_the_old_one_with_its_answers(editor_client, demo):
    """D2: an answered question of a published lesson is replaced on the lesson's page: the
    lesson stays published, the old question keeps its answers, learners start the new one."""
    learner = Client()
    finish_round(learner, demo, [True] * 8)
    eighth = demo.questions.get(position=8)
    assert Memory.objects.filter(question=eighth).count() == 1
    data = change_page_data(editor_client, demo)
    index = next(n for n in range(8) if data[f"questions-{n}-id"] == eighth.pk)
    data = replaced_question_data(data, index)
    data[f"questions-{index}-replace"] = "on"

    page = editor_client.post(CHANGE.format(demo.pk), data)
    html = page.content.decode()
    assert page.status_code == 200 and "Replace 1 question learners answered?" in html
    assert "its 1 answer from 1 learner stays with it" in html
    assert Question.objects.get(pk=eighth.pk).prompt == eighth.prompt  # nothing saved yet

    done = editor_client.post(CHANGE.format(demo.pk), data | {"_replace": "yes"})
    assert done.status_code == 302, done.content.decode()[:3000]
    old = Question.everything.get(pk=eighth.pk)
    new = demo.questions.get(position=8)
    assert old.retired_at is not None and old.prompt == eighth.prompt
    assert new.pk != old.pk and new.key != old.key and new.prompt.startswith("How many requests")
    assert not {c["id"] for c in new.choices} & {c["id"] for c in old.choices}
    assert Review.objects.filter(question=old).count() == 1
    assert not Review.objects.filter(question=new).exists()
    assert not Memory.objects.filter(question=old).exists()
    assert Lesson.objects.get(pk=demo.pk).is_published and demo.questions.count() == 8

    # The learner's export keeps the old question's answer, under its own key.
    items = {item["item"]: item for item in exported(learner)["items"]}
    assert len(items[f"question:{old.key}"]["reviews"]) == 1
    assert f"question:{new.key}" not in items
    # The sky draws the lesson's eight questions: the new one unlit, the old one gone.
    table = learner.get("/sky/table").content.decode()
    rows = re.findall(r'<th scope="row">Question (\d+)</th><td>([^<]*)</td>', table)
    assert [number for number, _ in rows] == [str(n) for n in range(1, 9)]
    assert rows[7][1].startswith("unlit") and all(w.startswith("kindled") for _, w in rows[:7])


def test_another_question_typed_over_an_answered_one_is_asked_about(editor_client, demo):
    """D2's other half: a new prompt and a new right answer written over an answered question
    (same rows, so the right answer keeps its identity) is asked about before it is saved."""
    finish_round(Client(), demo, [True] * 8)
    eighth = demo.questions.get(position=8)
    data = change_page_data(editor_client, demo)
    index = next(n for n in range(8) if data[f"questions-{n}-id"] == eighth.pk)
    right = slot_of_right(data, f"questions-{index}-")
    data = replaced_question_data(data, index)
    for slot in range(4):  # the right answer stays in its row
        data.pop(f"questions-{index}-choice_{slot}_correct", None)
        data[f"questions-{index}-choice_{slot}_why"] = "Each token lets one through."
    data[f"questions-{index}-choice_{right}_correct"] = "on"
    data[f"questions-{index}-choice_{right}_why"] = ""

    page = editor_client.post(CHANGE.format(demo.pk), data)
    html = page.content.decode()
    assert "Is this the same question, reworded, or a new one?" in html
    assert f'name="_rewritten_{eighth.pk}" value="same"' in html
    assert Question.objects.get(pk=eighth.pk).prompt == eighth.prompt

    # "The same question, reworded": saved in place, its history stays with it.
    same = editor_client.post(CHANGE.format(demo.pk), data | {f"_rewritten_{eighth.pk}": "same"})
    assert same.status_code == 302
    reworded = Question.objects.get(pk=eighth.pk)
    assert reworded.prompt.startswith("How many requests")
    assert Memory.objects.filter(question=reworded).count() == 1


def test_a_rewritten_question_called_new_is_retired_like_a_replaced_one(editor_client, demo):
    """Through the pages as a browser sends them: the question page's "A new question: retire
    the old one" and its "Yes, save" save it (they led to a second page, asking to confirm the
    replacement, whose form lost the first answer and led back: a loop)."""
    finish_round(Client(), demo, [True] * 8)
    eighth = demo.questions.get(position=8)
    data = change_page_data(editor_client, demo)
    index = next(n for n in range(8) if data[f"questions-{n}-id"] == eighth.pk)
    data = replaced_question_data(data, index)
    asked = editor_client.post(CHANGE.format(demo.pk), data).content.decode()
    assert "Is this the same question, reworded, or a new one?" in asked
    form = asked[asked.index('<form method="post" action="" id="confirm-save">') :]
    sent: dict[str, list[str]] = {}
    for name, value in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', form):
        sent.setdefault(name, []).append(unescape(value))
    sent |= {f"_rewritten_{eighth.pk}": ["new"], "_confirmed": ["yes"]}
    page = editor_client.post(CHANGE.format(demo.pk), sent)
    assert page.status_code == 302, page.content.decode()[:3000]
    assert Question.everything.get(pk=eighth.pk).retired_at is not None
    assert demo.questions.get(position=8).prompt.startswith("How many requests")


def test_a_learner_mid_round_carries_on_after_a_question_is_replaced(editor_client, demo):
    learner = Client()
    answer(learner, demo, right=True)
    second = demo.questions.get(position=2)
    data = change_page_data(editor_client, demo)
    index = next(n for n in range(8) if data[f"questions-{n}-id"] == second.pk)
    data = replaced_question_data(data, index) | {f"questions-{index}-replace": "on"}
    assert editor_client.post(CHANGE.format(demo.pk), data).status_code == 302  # nobody answered
    page = learner.get(demo.get_absolute_url() + "/practice")
    assert page.status_code == 200
    for number in range(2, 9):  # the round carries on, with the new question 2 in it
        response = answer(learner, demo, right=True)
        assert response["Location"].endswith(f"?answered={number}#feedback")
    end = learner.get(demo.get_absolute_url() + "/practice?summary=1").content.decode()
    assert "You answered <strong>8 of 8</strong> right the first time." in end
    assert not Review.objects.filter(question_id=second.pk).exists()
    assert Review.objects.filter(question=demo.questions.get(position=2)).count() == 1


def test_a_revision_from_before_a_replacement_brings_the_retired_question_back(editor_client, demo):
    """The old version of a lesson names a question that "Replace this question" retired: its
    restore (and an upload of a file saved before) brings that question back, by its key, and
    asks about the replacement learners answered since; never an error page."""
    old_learner, new_learner = Client(), Client()
    finish_round(old_learner, demo, [True] * 8)
    eighth = demo.questions.get(position=8)
    before = demo.revisions.first()
    data = change_page_data(editor_client, demo)
    index = next(n for n in range(8) if data[f"questions-{n}-id"] == eighth.pk)
    data = replaced_question_data(data, index) | {f"questions-{index}-replace": "on"}
    assert editor_client.post(CHANGE.format(demo.pk), data | {"_replace": "yes"}).status_code == 302
    replacement = demo.questions.get(position=8)
    answer(new_learner, demo, right=True)
    finish_round(new_learner, demo, [True] * 7)
    assert Review.objects.filter(question=replacement).count() == 1

    url = f"/admin/lessons/lesson/{demo.pk}/revisions/{before.pk}/restore/"
    preview = editor_client.get(url)
    html = preview.content.decode().replace("&#x27;", "'")
    assert preview.status_code == 200
    assert f"(key {eighth.key}) will be brought back" in html
    assert f"(key {replacement.key}) is left out and has 1 answer from 1 learner" in html
    assert demo.questions.get(position=8).pk == replacement.pk  # looking changes nothing

    assert editor_client.post(url, {"missing": "retire"}).status_code == 302
    back = demo.questions.get(position=8)
    assert back.pk == eighth.pk and back.retired_at is None and back.key == eighth.key
    assert not demo.questions.filter(pk=replacement.pk).exists()
    assert Review.objects.filter(question=eighth).count() == 1  # its answers came back with it
    assert Review.objects.filter(question=replacement).count() == 1
    assert demo.questions.count() == 8
    # Learners start the question brought back afresh: it asks again, unlit, in the sky.
    table = old_learner.get("/sky/table").content.decode()
    rows = re.findall(r'<th scope="row">Question (\d+)</th><td>([^<]*)</td>', table)
    assert rows[7][1].startswith("unlit")


def test_a_reworded_question_whose_right_answer_moved_asks_about_memory_too(editor_client, demo):
    """The editors' walk of 2026-12-06: a new prompt and the tick moved to another choice, called
    "the same question, reworded", kept learners' memory of the old right answer unasked."""
    learner = Client()
    finish_round(learner, demo, [True] * 8)
    eighth = demo.questions.get(position=8)
    data = change_page_data(editor_client, demo)
    index = next(n for n in range(8) if data[f"questions-{n}-id"] == eighth.pk)
    prefix = f"questions-{index}-"
    data[prefix + "prompt"] = "Which plan finishes a step first, counting overlap only once?"
    right = slot_of_right(data, prefix)
    other = 0 if right else 1
    data.pop(f"{prefix}choice_{right}_correct")
    data[f"{prefix}choice_{right}_why"] = "It is not the answer any more."
    data[f"{prefix}choice_{other}_correct"] = "on"

    html = editor_client.post(CHANGE.format(demo.pk), data).content.decode()
    assert "Is this the same question, reworded, or a new one?" in html
    assert "The right answer changes on 1 question learners remember" in html
    assert "Reset their memory and save" in html

    same = data | {f"_rewritten_{eighth.pk}": "same", "_memory": "reset"}
    assert editor_client.post(CHANGE.format(demo.pk), same).status_code == 302
    reworded = Question.objects.get(pk=eighth.pk)
    assert reworded.prompt.startswith("Which plan finishes")
    assert not Memory.objects.filter(question=reworded).exists()
    assert Review.objects.filter(question=reworded).count() == 1


def test_a_revision_from_before_a_replacement_and_a_reorder_restores_both(editor_client, demo):
    """The diff review of 2026-12-06: replace question 3, then move the replacement to 5 and
    question 5 to 3; the earlier revision puts the retired question back at 3, where question
    5 now is. It failed on the place, then was refused; a restore now sets positions too
    (the editors' review of 2026-12-07), so question 5 goes back to 5 and the replacement,
    which the revision does not have and no learner answered, is deleted."""
    before = demo.revisions.first()
    third, fifth = demo.questions.get(position=3), demo.questions.get(position=5)
    data = change_page_data(editor_client, demo)
    index = next(n for n in range(8) if data[f"questions-{n}-id"] == third.pk)
    data = replaced_question_data(data, index) | {f"questions-{index}-replace": "on"}
    assert editor_client.post(CHANGE.format(demo.pk), data).status_code == 302
    data = change_page_data(editor_client, demo)
    moves = {"3": "5", "5": "3"}
    for n in range(8):
        position = str(data[f"questions-{n}-position"])
        data[f"questions-{n}-position"] = moves.get(position, position)
    assert editor_client.post(CHANGE.format(demo.pk), data).status_code == 302
    assert demo.questions.get(position=3).pk == fifth.pk

    url = f"/admin/lessons/lesson/{demo.pk}/revisions/{before.pk}/restore/"
    replacement = demo.questions.get(position=5)
    html = editor_client.get(url).content.decode()
    assert f"question {fifth.key} will move from position 3 to 5" in html
    assert editor_client.post(url, {"missing": "retire"}).status_code == 302
    assert demo.questions.get(position=3).pk == third.pk
    assert demo.questions.get(position=5).pk == fifth.pk
    assert not demo.questions.filter(pk=replacement.pk).exists()
