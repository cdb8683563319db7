"""The item checker names each kind of cue the content review's checker test missed, and leaves
ordinary good items alone."""

from __future__ import annotations

import pytest

from lessons.files import markdown_to_lesson
from lessons.item_checks import answer_given_away, question_warnings
from lessons.models import Question
from tests.factories import make_lesson
from tests.lessons.test_item_checks import check_lessons, choices

# One flawed question per kind, written for this test; question 9 carries the prompt that gives
# question 8's answer away. Each question has that one cue and no other.
FLAWED_LESSON = """\
---
title: "Item-writing cues, one per question"
subject: "computing"
area: "machine-learning"
age_from: null
age_to: null
---

::: question 1 a1
A colleague plans replicated data parallelism across 8 devices, and the job runs out of memory. \
Why?

::: choice A right
Each replica must hold every parameter, more than a device has

::: choice B wrong
The all-reduce of gradients takes too long each step

::: choice C wrong
The batch is too large

::: choice D wrong
Eight devices are too few

::: question 2 a2
The operation that sums the gradients of every device and gives each device the total is an

::: choice A wrong
broadcast

::: choice B right
all-reduce

::: choice C wrong
reduce-scatter

::: choice D wrong
scatter

::: question 3 a3
Under tensor parallelism, the parts of a layer that are cut across devices are

::: choice A wrong
the whole model

::: choice B wrong
the batch

::: choice C right
its weight matrices

::: choice D wrong
the optimiser state of each layer

::: question 4 a4
What does a ring all-reduce send from each device per step?

::: choice A right
About twice the size of its gradients

::: choice B wrong
Invariably one copy of its gradients

::: choice C wrong
Its gradients once, under all circumstances

::: choice D wrong
Half its gradients, without exception

::: question 5 a5
Which strategies divide the model itself across devices?

::: choice A wrong
Tensor parallelism

::: choice B wrong
Replicated data parallelism

::: choice C wrong
Pipeline parallelism

::: choice D right
Both A and C

::: question 6 a6
A 1-billion-parameter model is trained with Adam in 4-byte numbers. How much model state does \
each replica hold?

::: choice A wrong
At least 4 GB

::: choice B wrong
At least 8 GB

::: choice C right
At least 16 GB

::: choice D wrong
Less than 4 GB

::: question 7 a7
Why does a bounded queue slow a fast producer down when the consumer lags?

::: choice A right
The bounded queue fills, and each send waits

::: choice B wrong
The consumer drops the jobs that it cannot handle

::: choice C wrong
The network between them gets congested

::: choice D wrong
The system lowers the producer's priority

::: question 8 a8
Three processes form a ring, and each first waits to receive from the one before it, then sends \
to the one after. What happens?

::: choice A right
They deadlock, each blocked on a message never sent

::: choice B wrong
The lowest-numbered process goes first and the ring completes

::: choice C wrong
The ring completes once every queue has filled

::: choice D wrong
It hangs only when all three start at the same moment

::: question 9 a9
A ring of processes can deadlock, each blocked on a message never sent. Which change lets such \
a ring complete?

::: choice A right
Let one process send before it receives

::: choice B wrong
Give every process a bigger queue

::: choice C wrong
Number the processes from one

::: choice D wrong
Add a random pause before each blocking receive
"""

EACH_KIND = {
    1: "question 1: The right answer is much longer than the wrong choices on average "
    "(62 characters against 33).",
    2: "question 2: The prompt ends with “an”, which does not read on into choices A, C and D: "
    "they start with a consonant sound.",
    3: "question 3: The prompt ends with “are”, which asks for a plural answer, but choices A, B "
    "and D are singular.",
    4: "question 4: Absolute words (“invariably”, “under all circumstances”, “without "
    "exception”) appear only in wrong choices (B, C, D).",
    5: "question 5: Choice D (“Both A and C”) points at other choices by their letters.",
    6: "question 6: Choices A and B; A and C; B and C take in some of the same values "
    "(“At least 4 GB”, “At least 8 GB”, “At least 16 GB”).",
    7: "question 7: The right answer repeats “bounded” and “queue” from the prompt, and no wrong "
    "choice does.",
    8: "question 8: The prompt of question 9 gives away the right answer to question 8: it uses "
    "“deadlock”, “blocked”, “message”, “never” and “sent”",
}


def test_check_lessons_names_each_kind_of_cue_once(tmp_path):
    (tmp_path / "cues.md").write_text(FLAWED_LESSON)
    out, error = check_lessons(tmp_path)
    assert error is not None and str(error) == "Checked 1 lesson file: 8 warnings."
    lines = out.splitlines()
    assert len(lines) == len(EACH_KIND)
    for line, (position, start) in zip(lines, EACH_KIND.items(), strict=True):
        assert line.startswith(f"cues.md: {start}"), (position, line)


def test_each_warning_says_what_to_change():
    # An editor reads one warning at a time: each ends by saying what to do.
    advice = {
        1: "shorten it, or give the wrong choices as much detail.",
        2: "end the prompt before the article and start every choice with its own “a” or “an”.",
        3: "make every choice plural, or ask a whole question instead.",
        5: "write a real choice instead.",
        6: "make the ranges separate, with no shared ends.",
        7: "use those words in some wrong choices too, or reword the right answer.",
    }
    questions = lesson_questions(FLAWED_LESSON)
    for position, ending in advice.items():
        question = questions[position - 1]
        [warning] = question_warnings(question.prompt, question.choices)
        assert warning.endswith(ending), warning
    [warning] = answer_given_away(questions[7], questions)
    assert warning.endswith("reword question 9's prompt, or this right answer.")


def lesson_questions(text: str) -> list[Question]:
    """The questions of a lesson file, unsaved, as check_lessons reads them."""
    lesson = markdown_to_lesson(text)
    return [
        Question(position=item["position"], prompt=item["prompt"], choices=item["choices"])
        for item in lesson["questions"]
    ]


# Right answer longer than the wrong choices on average -----------------------------------------


def test_a_right_answer_near_the_longest_wrong_one_but_far_above_the_mean_is_flagged():
    # 1.2 times the longest wrong choice, under the "longest by far" rule; 1.6 times the mean.
    cued = choices(
        "Each replica holds every parameter, so none fits",
        "The all-reduce takes too long each step",
        "The batch is too large",
        "Eight devices are too few",
    )
    [warning] = question_warnings("Why does the plan fail?", cued)
    assert warning.startswith("The right answer is much longer than the wrong choices on average")


@pytest.mark.parametrize(
    "texts",
    [
        # only slightly longer than the mean (1.1 times)
        (
            "Shard the parameters over the 8 devices",
            "Use 16 devices instead of 8",
            "Halve each device's share of the batch",
            "Shard only the optimiser state",
        ),
        # far above the mean as a ratio, but only a few letters: a short name
        ("Reduce-scatter", "All-gather", "Reduce", "Gather"),
    ],
)
def test_a_right_answer_a_little_longer_than_the_mean_is_not_flagged(texts):
    assert question_warnings("Which?", choices(*texts)) == []


# a / an ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "texts"),
    [
        # every choice starts with a consonant sound, as "a" needs
        (
            "A queue with room for a fixed number of jobs is a",
            ("bounded queue", "lock", "pipe", "stack"),
        ),
        # every choice starts with a vowel sound, initialisms and numbers read aloud included
        (
            "The call each process makes to join the sum is an",
            ("all-reduce", "MPI barrier", "8-way split", "hourly sync"),
        ),
        # a consonant letter with a vowel sound, a vowel letter with a consonant sound
        ("The work each device does is called a", ("unit of work", "step", "one-off task", "pass")),
        # a name, not an article
        ("The faster of the two is plan A", ("yes", "no", "maybe", "never mind")),
    ],
)
def test_an_article_that_fits_every_choice_is_not_flagged(prompt, texts):
    assert not [w for w in question_warnings(prompt, choices(*texts)) if "prompt ends" in w]


# Singular and plural --------------------------------------------------------------------------


def test_a_singular_verb_followed_by_plural_choices_is_flagged():
    cued = choices("the optimiser state", "the gradients", "whole layers", "the activations")
    [warning] = question_warnings("What stage 1 of ZeRO divides among devices is", cued)
    assert warning.startswith("The prompt ends with “is”, which asks for a singular answer, but ")
    assert "choices B, C and D are plural." in warning


@pytest.mark.parametrize(
    "texts",
    [
        ("weight matrices", "whole layers", "the gradients of each layer", "the batches"),
        (
            "activations and gradients",
            "two full model replicas",
            "these pipeline stages",
            "the data of each batch",
        ),
        # a bare singular may be a mass noun, which reads well after "are"
        ("weight matrices", "bandwidth", "activations", "partial sums"),
    ],
)
def test_a_verb_that_agrees_with_every_choice_is_not_flagged(texts):
    assert question_warnings("The parts that tensor parallelism divides are", choices(*texts)) == []


# Absolute words -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "wrong",
    [
        "Invariably after one round",
        "In every case after one round",
        "Under all circumstances after one round",
        "After one round, without exception",
        "At all times after one round",
        "Not before the end at all.",
    ],
)
def test_absolutes_beyond_the_word_list_are_flagged(wrong):
    cued = choices("Usually after the last send", wrong, "After the first send", "Before the wait")
    [warning] = question_warnings("When does it finish?", cued)
    assert warning.startswith("Absolute words (“") and "appear only in wrong choices (B)" in warning


def test_absolute_words_are_not_flagged_when_the_right_answer_has_one_too_or_none_has_any():
    hedged = choices("Usually after one round", "Often after two", "After a few", "Rarely at once")
    assert question_warnings("When does it finish?", hedged) == []
    firm = choices(
        "In every case after one round",
        "Invariably at once, before any send",
        "Later, after the second round",
        "Sooner, while the first round runs",
    )
    assert question_warnings("When does it finish?", firm) == []
    # "at all" inside a longer phrase is not a sweeping claim
    plain = choices("It reads each layer", "It looks at all layers", "It skips one", "It stops")
    assert question_warnings("What does the check do?", plain) == []


# Choices that point at other choices ----------------------------------------------------------


@pytest.mark.parametrize(
    ("cue", "shown"),
    [
        ("Both A and C", "Choice D (“Both A and C”) points at other choices"),
        ("Neither A nor B", "Choice D (“Neither A nor B”) points at other choices"),
        ("A, B and C", "Choice D (“A, B and C”) points at other choices"),
        ("A and C are correct", "Choice D (“A and C are correct”) points at other choices"),
        ("None of these", "Choice D says “… of these”."),
        ("All of the above", "Choice D says “… of the above”."),
    ],
)
def test_a_choice_naming_other_choices_is_flagged(cue, shown):
    cued = choices("Tensor parallelism", "Replicated data", "Pipeline parallelism", cue, right=3)
    [warning] = question_warnings("Which strategies split the model?", cued)
    assert warning.startswith(shown)


def test_letters_that_name_things_in_the_question_are_not_flagged():
    stages = choices(
        "A and B idle in turn", "Stage A idles twice", "Only B idles", "Both stay busy"
    )
    assert question_warnings("In the two-stage table, which stages idle?", stages) == []


# Overlapping ranges ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("texts", "pairs"),
    [
        (("4–8 GB", "8–16 GB", "17–32 GB", "Over 32 GB"), "Choices A and B take in"),
        (
            ("Under 10 ms", "Between 5 and 20 ms", "20 to 40 ms.", "More than 40 ms"),
            "Choices A and B; B and C take in",
        ),
        (("16 GB", "At most 16 GB", "32 GB", "64 GB or more"), "Choices A and B take in"),
    ],
)
def test_overlapping_ranges_are_flagged(texts, pairs):
    [warning] = question_warnings("How much?", choices(*texts, right=2))
    assert warning.startswith(pairs)


@pytest.mark.parametrize(
    "texts",
    [
        ("Under 8 GB", "8 to 16 GB", "17 to 32 GB", "More than 32 GB"),
        ("Less than 10 ms", "10–20 ms", "21–40 ms", "Over 40 ms"),
        # plain numbers never overlap; equal ones are duplicates, a warning of their own
        ("8 GB", "12 GB", "16 GB", "20 GB"),
        # ranges in different units are not compared
        ("At least 8 GB", "At least 8 ms", "Under 4 GB", "Under 4 ms"),
        # a sentence that mentions numbers is not read as a range
        ("At least 8 GB per device, for 64 GB in all", "4 GB", "2 GB", "1 GB"),
    ],
)
def test_ranges_that_do_not_overlap_are_not_flagged(texts):
    warnings = question_warnings("How much?", choices(*texts, right=1), keep_choice_order=True)
    assert not [w for w in warnings if "same values" in w]


# A rare word shared by the prompt and the right answer alone ---------------------------------


def test_a_part_of_a_hyphenated_prompt_word_counts():
    # The content review's example: "key-value cache" in the prompt points at "keys and values".
    cued = choices(
        "Their keys and values", "The attention weights", "The output scores", "The gradients"
    )
    [warning] = question_warnings("What does the key-value cache keep for each token?", cued)
    assert warning.startswith("The right answer repeats “values” from the prompt")


def test_a_rare_word_in_a_wrong_choice_too_or_an_everyday_word_is_not_flagged():
    shared = choices(
        "The bounded queue fills, and each send waits",
        "The bounded queue drops the jobs it cannot hold",
        "The network between them gets congested",
        "The system lowers the producer's priority",
    )
    assert question_warnings("Why does a bounded queue slow the producer?", shared) == []
    everyday = choices(
        "Each step takes longer",
        "The batch shrinks",
        "Tokens arrive sooner",
        "The weights are read once",
    )
    # "each", "step" and "longer" are everyday words
    assert question_warnings("What happens to each step when the batch grows?", everyday) == []


def test_a_right_answer_echoed_whole_gets_one_warning_not_two():
    cued = choices(
        "The whole batch is split",
        "Only the layers are split",
        "The optimiser state is copied",
        "Only the gradients",
    )
    [warning] = question_warnings("If the whole batch is split across devices, what is sent?", cued)
    assert warning.startswith("The prompt repeats the wording of choice A.")


# An answer given away by another question's prompt --------------------------------------------


def test_a_term_named_in_another_prompt_is_not_a_giveaway():
    # One word that sets the answer apart is the lesson's vocabulary, not a giveaway.
    strategy = Question(
        position=1,
        prompt="A device holds layers 9 to 16 and passes activations on. Which strategy is this?",
        choices=choices(
            "Pipeline parallelism", "Tensor parallelism", "Replicated data", "Sharding", right=0
        ),
    )
    bubble = Question(position=6, prompt="A pipeline has 4 balanced stages. What share idles?")
    assert answer_given_away(strategy, [bubble]) == []


def test_a_hyphenated_term_counts_as_one_word_for_a_giveaway():
    collective = Question(
        position=5,
        prompt="Which collective leaves each worker only its own slice of the sum?",
        choices=choices("All-gather", "All-reduce", "Reduce", "Reduce-scatter", right=3),
    )
    after = Question(position=6, prompt="After a reduce-scatter, what does each worker hold?")
    assert answer_given_away(collective, [after]) == []


def test_a_prompt_that_holds_only_some_of_the_answer_is_not_a_giveaway():
    questions = lesson_questions(FLAWED_LESSON)
    ring, fix = questions[7], questions[8]
    fix.prompt = "A ring of processes can deadlock. Which change lets such a ring complete?"
    assert answer_given_away(ring, [fix]) == []


# The admin lesson page ------------------------------------------------------------------------


def test_the_lesson_admin_page_shows_the_new_kinds(editor_client):
    lesson = make_lesson()  # the factory's questions have 3 choices each
    flawed = {q.position: q for q in lesson_questions(FLAWED_LESSON)}
    for position in (5, 8, 9):
        question = lesson.questions.get(position=position if position < 9 else 3)
        question.prompt = flawed[position].prompt
        question.choices = [
            {
                "text": c["text"],
                "correct": c["correct"],
                "explanation": "" if c["correct"] else "No.",
            }
            for c in flawed[position].choices
        ]
        question.save()
    html = editor_client.get(f"/admin/lessons/lesson/{lesson.pk}/change/").content.decode()
    assert (
        '<a href="#questions-4"><strong>Question 5:</strong> Choice D (“Both A and C”) points '
        "at other choices by their letters." in html
    )
    assert (
        '<a href="#questions-7"><strong>Question 8:</strong> The prompt of question 3 gives away '
        "the right answer to question 8" in html
    )
