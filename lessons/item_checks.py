"""Item-writing checks: cues in a question that let a test-wise learner answer without knowing.

Each check returns warnings in an editor's words, saying what it found and why it matters.
Warnings never block publishing; the admin shows them on a lesson's page and
`manage.py check_lessons DIR` prints them for lesson files.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import NamedTuple

from lessons.models import Question, choice_letter

# The right answer gives itself away by length when it is at least this much longer than the
# longest wrong choice, both as a ratio and in characters (so short numeric-like answers such
# as "Tensor parallelism" against "Reduce" do not count).
LONGEST_RATIO = 1.3
LONGEST_MARGIN = 15
# A right answer that is not the longest by far can still stand out against the wrong choices
# as a group: a quarter longer than their mean length and 10 characters more. The demo lessons'
# sentence answers stay within 1.1 times the mean; the margin spares short names, where a few
# letters make a large ratio ("Reduce-scatter" against "Reduce", "All-gather", "All-reduce").
MEAN_RATIO = 1.25
MEAN_MARGIN = 10
# A lesson-level pattern needs a few questions to mean anything.
PATTERN_MIN_QUESTIONS = 3
MIN_CHOICES = 4
ECHO_MIN_WORDS = 4
ABSOLUTE_WORDS = [
    "always", "never", "automatically", "certain", "certainly", "guaranteed", "guarantees",
    "no difference", "anywhere", "impossible", "none", "nothing", "completely", "entirely",
    "invariably", "inevitably", "unfailingly", "universally", "unconditionally", "necessarily",
    "absolutely", "definitely", "totally", "wholly", "utterly", "forever", "for ever",
    "everywhere", "nowhere", "everything", "nobody", "no one", "no matter",
    "regardless", "each and every", "every single",
]  # fmt: skip
# Sweeping claims are also made with phrases no list of words can hold: "in every case", "under
# all circumstances", "at all times", "in no situation", "without exception". These patterns
# cover a preposition, a word for all or none, and a word for occasions, in any combination;
# "at all" counts only at the end of a clause ("no effect at all"), not in "look at all layers".
ABSOLUTE_PHRASES = [
    r"at all(?=\s*(?:[.,;:!?)]|$))",
    r"(?:in|under|at|on|for) (?:all|every|any|no)(?: single)? (?:cases?|circumstances?|"
    r"situations?|conditions?|times?|occasions?|instances?|settings?|contexts?|scenarios?)",
    r"without (?:any )?(?:exception|fail)",
]
ABSOLUTE_PATTERN = re.compile(
    r"\b(" + "|".join([re.escape(word) for word in ABSOLUTE_WORDS] + ABSOLUTE_PHRASES) + r")\b",
    re.IGNORECASE,
)
OF_THE_ABOVE = re.compile(
    r"\b(?:all|none|both|neither) (of the above|the above|of these|of those|"
    r"of the (?:other|previous) (?:choices|answers|options))\b",
    re.IGNORECASE,
)
# "Both A and C", "Neither B nor D", "A, B and C", "Choices A and D are right": a choice that
# names other choices by letter. A bare pair such as "A and B" counts only as the whole choice
# or followed by "are right" (or the like), so that "A and B idle in turn", about stages named
# A and B, does not.
LETTER_LIST = r"(?:(?:choices?|answers?|options?) )?([A-H])(?:, ?[A-H])*,? (?:and|or|nor|&) ([A-H])"
NAMES_OTHER_CHOICES = re.compile(
    rf"^(?:(?i:both|either|neither|only) {LETTER_LIST}\b"
    rf"|{LETTER_LIST}(?: (?i:are|is) (?i:right|correct|true|false|wrong))?[.!]?$)"
)
# A number with an optional unit: "16 GB", "20%", "1,000 tokens", "6.5 GB", "−3".
NUMBER = re.compile(r"^\s*([-−]?\d[\d,]*(?:\.\d+)?)\s*(%|[A-Za-zµ/]{1,12})?\s*$")
# A choice that is a range of numbers, written whole: "At least 8 GB", "Under 5 ms",
# "Between 10 and 20 GB", "10–20 GB", "40 GB or more". Ranges are parsed only when they are the
# whole choice, so a sentence that mentions numbers is never read as a range.
_VALUE = r"(\d[\d,]*(?:\.\d+)?)\s*(%|[A-Za-zµ/]{1,12})?"
RANGE_FORMS = [
    (re.compile(pattern.replace("VALUE", _VALUE), re.IGNORECASE), form)
    for pattern, form in [
        (r"^(?:at least|no less than|no fewer than|not less than) VALUE$", "[x,)"),
        (r"^(?:more than|over|above|greater than|beyond) VALUE$", "(x,)"),
        (r"^(?:at most|up to|no more than|not more than) VALUE$", "(,x]"),
        (r"^(?:less than|under|below|fewer than) VALUE$", "(,x)"),
        (r"^VALUE or (?:more|above|over|higher|greater)$", "[x,)"),
        (r"^VALUE or (?:less|fewer|below|under|lower)$", "(,x]"),
        (r"^(?:between|from) VALUE (?:and|to) VALUE$", "[x,y]"),
        (r"^VALUE\s*(?:to|-|–|—)\s*VALUE$", "[x,y]"),
        (r"^(?:about|around|exactly|roughly)? ?VALUE$", "[x,x]"),
    ]
]
# Words so common in any English text that a prompt and its right answer sharing one is no cue.
# Anything else (a term, a name, a less usual verb) is a "rare" word for the stem–answer and
# cross-question checks. Words under CONTENT_MIN_LETTERS letters are never counted: nearly all
# are function words ("the", "and", "its"), and the few terms among them ("GPU") are not worth
# a list of their own.
CONTENT_MIN_LETTERS = 4
COMMON_WORDS = frozenset([
    "about", "above", "across", "after", "again", "against", "almost", "along", "also", "although",
    "among", "another", "answer", "anything", "area", "around", "away", "back", "because", "been",
    "before", "being", "below", "best", "better", "between", "both", "bring", "call", "came",
    "cannot", "case", "change", "come", "could", "does", "doing", "done", "down", "during", "each",
    "either", "else", "end", "even", "ever", "every", "example", "fast", "faster", "fewer", "find",
    "first", "five", "form", "four", "from", "full", "gets", "give", "given", "goes", "going",
    "good", "half", "have", "having", "help", "here", "high", "higher", "hold", "holds", "into",
    "itself", "just", "keep", "kind", "know", "large", "larger", "last", "least", "left", "less",
    "level", "like", "line", "little", "long", "longer", "look", "lower", "made", "make", "many",
    "more", "most", "much", "must", "name", "need", "next", "none", "number", "only", "onto",
    "order", "other", "others", "over", "part", "place", "point", "question", "read", "right",
    "same", "says", "seem", "should", "show", "side", "since", "slow", "slower", "small",
    "smaller", "some", "soon", "start", "step", "steps", "still", "stop", "such", "sure", "take",
    "than", "that", "their", "them", "then", "there", "these", "they", "thing", "this", "those",
    "though", "three", "through", "time", "together", "turn", "twice", "under", "until", "upon",
    "used", "uses", "using", "very", "want", "way", "well", "went", "were", "what", "when",
    "where", "whether", "which", "while", "whole", "will", "with", "within", "without", "word",
    "work", "world", "would", "write", "wrong", "year", "your"
])  # fmt: skip
# The words that set one question's right answer apart must number at least this many, and all
# appear in another question's prompt, before that prompt counts as giving the answer away: one
# shared word is usually the lesson's own vocabulary ("pipeline" in two questions on pipelines).
GIVEAWAY_MIN_WORDS = 2
# Completion prompts ("… is an", "… are") whose last word fixes what may follow.
# The article is matched in lower case only: a prompt ending in "plan A" ends with a name.
ENDS_WITH_ARTICLE = re.compile(r"\b(a|an)[\s_….:–—-]*$")
ENDS_WITH_VERB = re.compile(
    r"\b(is|are|was|were)(?: called| named| known as)?[\s_….:–—-]*$", re.IGNORECASE
)
# Words that begin with a vowel letter but a consonant sound ("a unit", "a one-off") or with a
# consonant letter but a vowel sound ("an hour"). Short, because a lesson's vocabulary is.
CONSONANT_SOUND_STARTS = ("uni", "use", "usu", "uti", "eu", "one", "once", "ubi", "ura")
VOWEL_SOUND_STARTS = ("hour", "honest", "honour", "honor", "heir")
# Initialisms read letter by letter: "an MPI call", "an SSD", "a GPU".
VOWEL_SOUND_LETTERS = set("AEFHILMNORSX")
# A singular noun counts as singular only after one of these; bare, it may be a mass noun.
SINGULAR_DETERMINERS = {"a", "an", "the", "one", "each", "every", "this", "another"}
PLURAL_DETERMINERS = {
    "these", "those", "both", "many", "several", "few", "multiple", "various", "two", "three",
    "four", "five", "six", "seven", "eight", "nine", "ten",
}  # fmt: skip
# A noun phrase's head is the last word before one of these: "the gradients of each layer".
HEAD_ENDS = {
    "of", "in", "on", "for", "from", "to", "with", "that", "which", "who", "whose", "where",
    "when", "across", "between", "by", "at", "inside", "within", "over", "under", "into", "per",
    "as", "than", "because", "since", "so", "while", "after", "before", "is", "are",
}  # fmt: skip
PRONOUNS = {"it", "they", "he", "she", "we", "you", "i", "there"}
IRREGULAR_PLURALS = {"people", "children", "men", "women", "criteria", "phenomena", "mice"}
NEITHER_NUMBER = {"data", "series", "species", "means", "news", "physics", "mathematics"}
SINGULAR_ENDINGS_IN_S = ("ss", "us", "is", "ous", "bias", "gas", "lens", "alias", "chaos")


def question_warnings(
    prompt: str, choices: list[dict], *, keep_choice_order: bool = False
) -> list[str]:
    """Every cue found in one question, each as a sentence an editor can act on."""
    checks = [
        longest_is_right(choices) or longer_than_the_wrong_choices_on_average(choices),
        numbers_out_of_order(choices, keep_choice_order=keep_choice_order),
        absolutes_only_in_wrong_choices(choices),
        of_the_above(choices),
        names_other_choices(choices),
        too_few_choices(choices),
        duplicate_choices(choices),
        ranges_overlap(choices),
        article_fits_only_some_choices(prompt, choices),
        verb_fits_only_some_choices(prompt, choices),
        prompt_repeats_a_choice(prompt, choices),
        right_answer_shares_a_word_with_the_prompt(prompt, choices),
    ]
    return [warning for warning in checks if warning]


def lesson_warnings(questions: Iterable[Question]) -> list[str]:
    """Cues in the lesson as a whole: a pattern across its questions."""
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
    """(question position, warning) for each question in order, its own cues first and then
    any other question's prompt that gives its answer away; then (None, warning) for the lesson
    as a whole."""
    questions = sorted(questions, key=lambda q: q.position or 0)
    found: list[tuple[int | None, str]] = [
        (q.position, warning)
        for q in questions
        for warning in [
            *question_warnings(q.prompt, q.choices, keep_choice_order=q.keep_choice_order),
            *answer_given_away(q, [other for other in questions if other is not q]),
        ]
    ]
    return found + [(None, warning) for warning in lesson_warnings(questions)]


def _lengths(choices: list[dict]) -> tuple[int, list[int]] | None:
    """The shortest right answer's length and each wrong choice's, for a question of words
    with both kinds of choice; None for any other."""
    if not is_text_question(choices):
        return None
    right, wrong = _split(choices)
    if not right or not wrong:
        return None
    return min(len(_text(c)) for c in right), [len(_text(c)) for c in wrong]


def longest_is_right(choices: list[dict]) -> str | None:
    if (lengths := _lengths(choices)) is None:
        return None
    shortest_right, longest_wrong = lengths[0], max(lengths[1])
    if shortest_right >= LONGEST_RATIO * longest_wrong and (
        shortest_right - longest_wrong >= LONGEST_MARGIN
    ):
        return (
            f"The right answer is much the longest choice ({shortest_right} characters; the "
            f"longest wrong one has {longest_wrong}). Test-wise learners pick the long, careful "
            "choice without knowing the answer; shorten it, or give wrong choices as much detail."
        )
    return None


def longer_than_the_wrong_choices_on_average(choices: list[dict]) -> str | None:
    """A right answer that stands out against the wrong choices as a group, even when one wrong
    choice comes close to it."""
    if (lengths := _lengths(choices)) is None:
        return None
    shortest_right, mean_wrong = lengths[0], sum(lengths[1]) / len(lengths[1])
    if shortest_right >= MEAN_RATIO * mean_wrong and shortest_right - mean_wrong >= MEAN_MARGIN:
        return (
            f"The right answer is much longer than the wrong choices on average ({shortest_right} "
            f"characters against {mean_wrong:.0f}). Test-wise learners pick the choice with the "
            "most detail; shorten it, or give the wrong choices as much detail."
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
    found = [(_letter(choices, c), OF_THE_ABOVE.search(_text(c))) for c in choices]
    letters = [letter for letter, match in found if match]
    if not letters:
        return None
    phrase = next(match[1] for _, match in found if match).lower()
    return (
        f"Choice {', '.join(letters)} says “… {phrase}”. It is answered by spotting two true "
        "(or false) choices rather than by knowing the answer, and it makes no sense once "
        "choices are shuffled; write a real choice instead."
    )


def names_other_choices(choices: list[dict]) -> str | None:
    """A choice such as "Both A and C" that points at other choices by their letters."""
    named = [c for c in choices if NAMES_OTHER_CHOICES.search(_text(c))]
    if not named:
        return None
    letters = [_letter(choices, c) for c in named]
    return (
        f"{_choices(letters, start=True)} (“{_text(named[0])}”) "
        f"{'points' if len(letters) == 1 else 'point'} at other choices by their letters. It is "
        "answered by spotting which choices are true rather than by knowing the answer, and "
        "once choices are shuffled its letters point at different ones; write a real choice "
        "instead."
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


def ranges_overlap(choices: list[dict]) -> str | None:
    """Choices that are ranges of numbers ("At least 8 GB") and take in some of the same values."""
    ranges = [(c, numeric_range(_text(c))) for c in choices]
    parsed = [(c, r) for c, r in ranges if r is not None]
    pairs = []
    overlapping: list[dict] = []
    for index, (first, first_range) in enumerate(parsed):
        for second, second_range in parsed[index + 1 :]:
            if first_range.overlaps(second_range):
                pairs.append(f"{_letter(choices, first)} and {_letter(choices, second)}")
                overlapping += [c for c in (first, second) if c not in overlapping]
    if not pairs:
        return None
    shown = ", ".join(f"“{_text(c)}”" for c in choices if c in overlapping)
    return (
        f"Choices {'; '.join(pairs)} take in some of the same values ({shown}). A value in two "
        "choices makes both right, and a range that holds another is the safe pick; make the "
        "ranges separate, with no shared ends."
    )


def article_fits_only_some_choices(prompt: str, choices: list[dict]) -> str | None:
    """A prompt ending in "a" or "an" that reads on into some choices but not others."""
    ending = ENDS_WITH_ARTICLE.search(prompt)
    if not ending:
        return None
    article = ending[1].lower()
    fits: list[str] = []
    misfits: list[str] = []
    for choice in choices:
        first = re.match(r"[^\W_]+", _text(choice))
        if not first or first[0].lower() in {"a", "an", "the"}:
            continue  # a choice with its own article cannot follow one; the prompt is at fault
        agrees = (article == "an") == starts_with_vowel_sound(first[0])
        (fits if agrees else misfits).append(_letter(choices, choice))
    if not fits or not misfits:
        return None
    sound = "consonant" if article == "an" else "vowel"
    return (
        f"The prompt ends with “{ending[1]}”, which does not read on into {_choices(misfits)}: "
        f"{'it starts' if len(misfits) == 1 else 'they start'} with a {sound} sound. Learners "
        "rule out choices that do not fit the sentence; end the prompt before the article and "
        "start every choice with its own “a” or “an”."
    )


def verb_fits_only_some_choices(prompt: str, choices: list[dict]) -> str | None:
    """A prompt ending in "is" or "are" that agrees in number with some choices but not others."""
    ending = ENDS_WITH_VERB.search(prompt)
    if not ending or numeric_values(choices) is not None:
        return None
    wanted = "plural" if ending[1].lower() in {"are", "were"} else "singular"
    fits: list[str] = []
    misfits: list[str] = []
    for choice in choices:
        number = grammatical_number(_text(choice))
        if number is not None:
            (fits if number == wanted else misfits).append(_letter(choices, choice))
    if not fits or not misfits:
        return None
    words = ending[0].strip(" _….:–—-")
    return (
        f"The prompt ends with “{words}”, which asks for a {wanted} answer, but "
        f"{_choices(misfits)} {'is' if len(misfits) == 1 else 'are'} "
        f"{'singular' if wanted == 'plural' else 'plural'}. Learners rule out choices that do "
        f"not fit the sentence; make every choice {wanted}, or ask a whole question instead."
    )


def prompt_repeats_a_choice(prompt: str, choices: list[dict]) -> str | None:
    """A choice of several words written out in full in the prompt: learners pick the echo."""
    letters = [_letter(choices, c) for c in choices if _prompt_repeats(prompt, c)]
    if not letters:
        return None
    return (
        f"The prompt repeats the wording of choice {', '.join(letters)}. A choice that echoes "
        "the prompt is picked for its words, not its meaning; rephrase one of them."
    )


def right_answer_shares_a_word_with_the_prompt(prompt: str, choices: list[dict]) -> str | None:
    """A rare word in the prompt that comes back in the right answer and in no wrong choice."""
    if not is_text_question(choices):
        return None
    right, wrong = _split(choices)
    if not right or not wrong or any(_prompt_repeats(prompt, c) for c in right):
        return None  # a right answer repeated whole has its own warning
    # Parts of hyphenated words count: "key-value cache" in the prompt cues "keys and values".
    in_prompt = rare_words(prompt, parts=True)
    shared = {
        stem: word
        for stem, word in rare_words(_text(right[0]), parts=True).items()
        if stem in in_prompt and all(stem in rare_words(_text(c), parts=True) for c in right)
    }
    for choice in wrong:
        for stem in rare_words(_text(choice), parts=True):
            shared.pop(stem, None)
    if not shared:
        return None
    words = _quoted(shared.values())
    return (
        f"The right answer repeats {words} from the prompt, and no wrong choice does. Learners "
        "pick the choice that echoes the prompt without knowing why it is right; use "
        f"{'that word' if len(shared) == 1 else 'those words'} in some wrong choices too, or "
        "reword the right answer."
    )


def answer_given_away(question: Question, others: Iterable[Question]) -> list[str]:
    """Other questions whose prompt holds every rare word that sets this question's right answer
    apart from its wrong choices and its own prompt: read first, that prompt answers it."""
    choices = question.choices if isinstance(question.choices, list) else []
    if not is_text_question(choices):
        return []
    right, wrong = _split(choices)
    if not right or not wrong:
        return []
    # Whole words only: the parts of one term ("reduce-scatter", "scatter") are not two words.
    apart: dict[str, str] = {}
    for choice in right:
        apart.update(rare_words(_text(choice)))
    for text in [question.prompt, *(_text(c) for c in wrong)]:
        for stem in rare_words(text):
            apart.pop(stem, None)
    if len(apart) < GIVEAWAY_MIN_WORDS:
        return []
    words = _quoted(apart.values())
    return [
        f"The prompt of question {other.position} gives away the right answer to question "
        f"{question.position}: it uses {words}, the words that set that answer apart from the "
        f"wrong choices. Later rounds can ask question {other.position} first; reword question "
        f"{other.position}'s prompt, or this right answer."
        for other in others
        if apart.keys() <= rare_words(other.prompt).keys()
    ]


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


class NumberRange(NamedTuple):
    low: float
    high: float
    low_closed: bool
    high_closed: bool
    unit: str

    def holds(self, value: float) -> bool:
        above = self.low < value or (self.low_closed and value == self.low)
        return above and (value < self.high or (self.high_closed and value == self.high))

    def overlaps(self, other: NumberRange) -> bool:
        """Some value lies in both; two single numbers never count (that is a duplicate)."""
        if self.unit != other.unit or (self.low == self.high and other.low == other.high):
            return False
        low, high = max(self.low, other.low), min(self.high, other.high)
        return low < high or (low == high and self.holds(low) and other.holds(low))


def numeric_range(text: str) -> NumberRange | None:
    """The values a choice written as a range of numbers takes in, else None."""
    text = text.strip().rstrip(".")
    for pattern, form in RANGE_FORMS:
        match = pattern.match(text)
        if not match:
            continue
        numbers = [float(n.replace(",", "")) for n in match.groups()[::2] if n is not None]
        unit = next((u.lower() for u in reversed(match.groups()[1::2]) if u), "")
        x, y = numbers[0], numbers[-1]
        return {
            "[x,)": NumberRange(x, math.inf, True, False, unit),
            "(x,)": NumberRange(x, math.inf, False, False, unit),
            "(,x]": NumberRange(-math.inf, x, False, True, unit),
            "(,x)": NumberRange(-math.inf, x, False, False, unit),
            "[x,y]": NumberRange(x, y, True, True, unit),
            "[x,x]": NumberRange(x, x, True, True, unit),
        }[form]
    return None


def rare_words(text: str, *, parts: bool = False) -> dict[str, str]:
    """{stem: word as written} for the words of a text that are not everyday English; with
    `parts`, each part of a hyphenated word as well ("key-value" gives "value")."""
    words = re.findall(r"[^\W_]+(?:['’-][^\W_]+)*", text)
    if parts:
        words += [part for word in words if "-" in word for part in word.split("-")]
    found: dict[str, str] = {}
    for word in words:
        lower = word.lower().replace("’", "'").removesuffix("'s")
        if len(lower) < CONTENT_MIN_LETTERS or any(ch.isdigit() for ch in lower):
            continue
        stem = _stem(lower)
        if lower not in COMMON_WORDS and stem not in COMMON_STEMS:
            found.setdefault(stem, word)
    return found


def starts_with_vowel_sound(word: str) -> bool:
    if word[0].isdigit():
        # "an 8-bit", "an 80", "an 11", "an 18,000"; every other number starts with a consonant.
        lead = re.match(r"\d+", word)[0]  # type: ignore[index]
        return lead.startswith("8") or lead in {"11", "18"}
    if len(word) > 1 and word.isupper():
        return word[0] in VOWEL_SOUND_LETTERS
    lower = word.lower()
    if lower.startswith(VOWEL_SOUND_STARTS):
        return True
    return lower[0] in "aeiou" and not lower.startswith(CONSONANT_SOUND_STARTS)


def grammatical_number(text: str) -> str | None:
    """Whether a choice written as a noun phrase is singular or plural; None when unsure."""
    head_words = []
    for word in re.findall(r"[^\W_]+(?:['’-][^\W_]+)*|[,;:(]", text.lower()):
        if word in {",", ";", ":", "("} or word in HEAD_ENDS:
            break
        head_words.append(word)
    if not head_words or head_words[0][0].isdigit() or head_words[0] in PRONOUNS:
        return None  # "8 GB is" and "8 devices are" both read well; "It grows" is a clause
    if head_words[0] in PLURAL_DETERMINERS or "and" in head_words:
        return "plural"
    head = head_words[-1].replace("’", "'").removesuffix("'s")
    if head in NEITHER_NUMBER:
        return None
    if head in IRREGULAR_PLURALS or (
        len(head) > 3 and head.endswith("s") and not head.endswith(SINGULAR_ENDINGS_IN_S)
    ):
        return "plural"
    if head_words[0] in SINGULAR_DETERMINERS:
        return "singular"
    return None  # a bare singular may be a mass noun, which fits "are" too: "are starch"


def _split(choices: list[dict]) -> tuple[list[dict], list[dict]]:
    right = [c for c in choices if c.get("correct")]
    return right, [c for c in choices if not c.get("correct")]


def _text(choice: dict) -> str:
    return str(choice.get("text", "")).strip()


def _letter(choices: list[dict], choice: dict) -> str:
    return choice_letter(next(i for i, c in enumerate(choices) if c is choice))


def _prompt_repeats(prompt: str, choice: dict) -> bool:
    """The prompt holds the choice's whole wording, and the choice is several words long."""
    wording = _normalise(_text(choice))
    return len(wording.split()) >= ECHO_MIN_WORDS and f" {wording} " in f" {_normalise(prompt)} "


def _stem(word: str) -> str:
    """A rough common form, so that "caches" meets "cache" and "batches" meets "batch"."""
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("es") and len(word) > 4:
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    return word.removesuffix("e")


COMMON_STEMS = frozenset(_stem(word) for word in COMMON_WORDS)


def _choices(letters: list[str], *, start: bool = False) -> str:
    """Letters as words: choice B, choices B and D, choices A, B and D (Choice … to start)."""
    word = "Choice" if start else "choice"
    if len(letters) == 1:
        return f"{word} {letters[0]}"
    return f"{word}s {', '.join(letters[:-1])} and {letters[-1]}"


def _quoted(words: Iterable[str]) -> str:
    """Words in quotes, joined: “a”, “a” and “b”, “a”, “b” and “c”."""
    quoted = [f"“{word}”" for word in words]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} and {quoted[-1]}"


def _normalise(text: str) -> str:
    """Lower case, words only: punctuation and spacing do not make two wordings differ."""
    return " ".join(re.findall(r"[\w%]+(?:[.,']\w+)*", text.lower()))
