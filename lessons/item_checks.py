"""Item-writing checks: cues in a question that let a test-wise learner answer without knowing.

Each check returns warnings in an editor's words, saying what it found and why it matters.
Warnings never block publishing; the admin shows them on a lesson's page and
`manage.py check_lessons DIR` prints them for lesson files.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from lessons.models import Question, choice_letter

# The right answer gives itself away by length when it is at least this much longer than the
# longest wrong choice, both as a ratio and in characters (so short numeric-like answers such
# as "Tensor parallelism" against "Reduce" do not count).
LONGEST_RATIO = 1.3
LONGEST_MARGIN = 15
# A lesson-level pattern needs a few questions to mean anything.
PATTERN_MIN_QUESTIONS = 3
MIN_CHOICES = 4
ECHO_MIN_WORDS = 4
ABSOLUTE_WORDS = [
    "always", "never", "automatically", "certain", "certainly", "guaranteed", "guarantees",
    "no difference", "anywhere", "impossible", "none", "nothing", "completely", "entirely",
]  # fmt: skip
ABSOLUTE_PATTERN = re.compile(
    r"\b(" + "|".join(re.escape(word) for word in ABSOLUTE_WORDS) + r")\b", re.IGNORECASE
)
OF_THE_ABOVE = re.compile(r"\b(all|none|both|neither) of the above\b", re.IGNORECASE)
# A number with an optional unit: "16 GB", "20%", "1,000 tokens", "6.5 GB", "−3".
NUMBER = re.compile(r"^\s*([-−]?\d[\d,]*(?:\.\d+)?)\s*(%|[A-Za-zµ/]{1,12})?\s*$")


def question_warnings(
    prompt: str, choices: list[dict], *, keep_choice_order: bool = False
) -> list[str]:
    """Every cue found in one question, each as a sentence an editor can act on."""
    checks = [
        longest_is_right(choices),
        numbers_out_of_order(choices, keep_choice_order=keep_choice_order),
        absolutes_only_in_wrong_choices(choices),
        of_the_above(choices),
        too_few_choices(choices),
        duplicate_choices(choices),
        prompt_repeats_a_choice(prompt, choices),
    ]
    return [warning for warning in checks if warning]


def lesson_warnings(questions: Iterable[Question]) -> list[str]:
    """Cues that only show across a lesson's questions."""
    text_questions = [q.choices for q in questions if is_text_question(q.choices)]
    longest = [choices for choices in text_questions if right_is_strictly_longest(choices)]
    if len(text_questions) >= PATTERN_MIN_QUESTIONS and len(longest) * 2 > len(text_questions):
        return [
            f"The right answer is the longest choice in {len(longest)} of the "
            f"{len(text_questions)} questions with text choices. A learner who always picks the "
            "longest choice scores well without knowing the material; make some wrong choices "
            "the longest, or trim the right ones."
        ]
    return []


def lesson_item_warnings(questions: Iterable[Question]) -> list[tuple[int | None, str]]:
    """(question position, warning) for each question in order, then (None, warning) for the
    lesson as a whole."""
    questions = sorted(questions, key=lambda q: q.position or 0)
    found: list[tuple[int | None, str]] = [
        (q.position, warning)
        for q in questions
        for warning in question_warnings(q.prompt, q.choices, keep_choice_order=q.keep_choice_order)
    ]
    return found + [(None, warning) for warning in lesson_warnings(questions)]


def longest_is_right(choices: list[dict]) -> str | None:
    if not is_text_question(choices):
        return None
    right, wrong = _split(choices)
    if not right or not wrong:
        return None
    shortest_right = min(len(_text(c)) for c in right)
    longest_wrong = max(len(_text(c)) for c in wrong)
    if shortest_right >= LONGEST_RATIO * longest_wrong and (
        shortest_right - longest_wrong >= LONGEST_MARGIN
    ):
        return (
            f"The right answer is much the longest choice ({shortest_right} characters; the "
            f"longest wrong one has {longest_wrong}). Test-wise learners pick the long, careful "
            "choice without knowing the answer; shorten it, or give wrong choices as much detail."
        )
    return None


def numbers_out_of_order(choices: list[dict], *, keep_choice_order: bool = False) -> str | None:
    values = numeric_values(choices)
    if keep_choice_order or values is None or values == sorted(values):
        return None
    shown = ", ".join(_text(c) for c in choices)
    return (
        f"The choices are numbers but not in ascending order ({shown}). A value out of place "
        "stands out and is slower to find; list them from smallest to largest and tick “keep "
        "choice order” so learners see them that way, or tick it alone if this order is meant."
    )


def absolutes_only_in_wrong_choices(choices: list[dict]) -> str | None:
    right, wrong = _split(choices)
    if not right or any(ABSOLUTE_PATTERN.search(_text(c)) for c in right):
        return None
    found = {
        _letter(choices, c): ABSOLUTE_PATTERN.findall(_text(c))
        for c in wrong
        if ABSOLUTE_PATTERN.search(_text(c))
    }
    if not found:
        return None
    words = sorted({word.lower() for words in found.values() for word in words})
    return (
        f"Absolute words ({', '.join(f'“{w}”' for w in words)}) appear only in wrong choices "
        f"({', '.join(found)}). Learners learn that sweeping claims are usually false and rule "
        "them out without knowing the material; word the right answer as firmly, or the wrong "
        "ones as carefully."
    )


def of_the_above(choices: list[dict]) -> str | None:
    letters = [_letter(choices, c) for c in choices if OF_THE_ABOVE.search(_text(c))]
    if not letters:
        return None
    return (
        f"Choice {', '.join(letters)} says “… of the above”. It is answered by spotting two true "
        "(or false) choices rather than by knowing the answer, and it makes no sense once "
        "choices are shuffled; write a real choice instead."
    )


def too_few_choices(choices: list[dict]) -> str | None:
    if len(choices) >= MIN_CHOICES:
        return None
    if len(choices) < 2:
        found = f"Only {len(choices)} choice{'' if len(choices) == 1 else 's'}: there is nothing "
        found += "to choose between."
    else:
        found = f"Only {len(choices)} choices: a blind guess is right 1 time in {len(choices)}."
    return f"{found} Add plausible wrong choices to reach at least {MIN_CHOICES}."


def duplicate_choices(choices: list[dict]) -> str | None:
    seen: dict[str, str] = {}
    pairs = []
    for choice in choices:
        text = _normalise(_text(choice))
        if text in seen:
            pairs.append(f"{seen[text]} and {_letter(choices, choice)}")
        else:
            seen[text] = _letter(choices, choice)
    if not pairs:
        return None
    return (
        f"Choices {'; '.join(pairs)} say the same thing. A repeated choice cannot be told apart "
        "and leaves fewer real options; reword or remove one."
    )


def prompt_repeats_a_choice(prompt: str, choices: list[dict]) -> str | None:
    """A choice of several words written out in full in the prompt: learners pick the echo."""
    words_in_prompt = f" {_normalise(prompt)} "
    letters = [
        _letter(choices, c)
        for c in choices
        if len(_normalise(_text(c)).split()) >= ECHO_MIN_WORDS
        and f" {_normalise(_text(c))} " in words_in_prompt
    ]
    if not letters:
        return None
    return (
        f"The prompt repeats the wording of choice {', '.join(letters)}. A choice that echoes "
        "the prompt is picked for its words, not its meaning; rephrase one of them."
    )


def is_text_question(choices: list[dict]) -> bool:
    return bool(choices) and numeric_values(choices) is None


def right_is_strictly_longest(choices: list[dict]) -> bool:
    right, wrong = _split(choices)
    return bool(right and wrong) and min(len(_text(c)) for c in right) > max(
        len(_text(c)) for c in wrong
    )


def numeric_values(choices: list[dict]) -> list[float] | None:
    """The choices' values when every choice is a number in one unit (or none), else None."""
    matches = [NUMBER.match(_text(c)) for c in choices]
    if not choices or not all(matches):
        return None
    if len({(m[2] or "").lower() for m in matches if m}) > 1:
        return None
    return [float(m[1].replace(",", "").replace("−", "-")) for m in matches if m]


def _split(choices: list[dict]) -> tuple[list[dict], list[dict]]:
    right = [c for c in choices if c.get("correct")]
    return right, [c for c in choices if not c.get("correct")]


def _text(choice: dict) -> str:
    return str(choice.get("text", "")).strip()


def _letter(choices: list[dict], choice: dict) -> str:
    return choice_letter(next(i for i, c in enumerate(choices) if c is choice))


def _normalise(text: str) -> str:
    """Lower case, words only: punctuation and spacing do not make two wordings differ."""
    return " ".join(re.findall(r"[\w%]+(?:[.,']\w+)*", text.lower()))
