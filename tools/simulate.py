"""`make simulate`: the project's own scheduler and star rule on simulated learners for 90 days.

Every scheduled answer goes through the code the site runs (`practice.scheduling.review` with
`rating_for_answer`, `practice.sky.outcome_of`, `Evidence.after`, `due_until_lit`, in the order
`practice.services._writes_for` calls them), and the sky is read with `sky.star_state`. What the
site cannot know is simulated: each learner's true memory of each item, which decays, and whether
a right answer was recalled or guessed. No database is touched.

The learners: 3 lessons of 8 four-choice questions (24 question stars). Reading a lesson encodes
about 70 % of its items (by learner and item); a learner who does not recall an item guesses, right
1 time in 4, and the feedback after a miss or a lucky guess encodes it weakly. Each learner-item
pair's true memory follows FSRS-6's stability formulas, driven by the learner's real recall (Good
when recalled, Again when not) at their true recall, its stability scaled by lognormal multipliers
per learner, item and pair; true recall is R = 0.9 ** (days since the last retrieval / true
stability). A blind guesser knows nothing and learns nothing. docs/simulation.md lists every
assumption and records a run.

SIMULATE_LEARNERS (200) learners per scenario and SIMULATE_SEED (1) set the run; the scenarios
run in parallel, one process a core.
"""

from __future__ import annotations

import math
import os
import random
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from practice import scheduling, sky
from practice.scheduling import MemoryState, SchedulerSettings

LEARNERS = int(os.environ.get("SIMULATE_LEARNERS", "200"))
SEED = int(os.environ.get("SIMULATE_SEED", "1"))
DAYS = 90
LESSONS = 3
QUESTIONS_PER_LESSON = 8
STARS = LESSONS * QUESTIONS_PER_LESSON
CHOICES = 4
GUESS_RATE = sky.guess_rate(CHOICES, several=False)
REVIEW_SET_SIZE = 8  # /review's sets (practice.selectors.REVIEW_SET_SIZE)

# The truth the site cannot see.
KNOWN_AFTER_READING = 0.7  # the typical chance that reading a lesson encodes one of its items
KNOWN_SPREAD_LEARNER = 0.8  # standard deviations of that chance on the log-odds scale
KNOWN_SPREAD_ITEM = 0.8
STABILITY_SPREAD_LEARNER = 0.35  # lognormal sigmas of the true stability's multiplier:
STABILITY_SPREAD_ITEM = 0.35  # sqrt(0.35² + 0.35² + 0.45²) ≈ 0.67 in all
STABILITY_SPREAD_PAIR = 0.45

# The clock of a visit.
START = datetime(2027, 1, 4, tzinfo=UTC)  # day 0, midnight UTC
VISIT_HOUR, VISIT_SPREAD_HOURS = 19.0, 1.5  # visits begin 17:30 to 20:30
ANSWER_TIME = timedelta(seconds=30)
READING_TIME = timedelta(minutes=10)
SAMPLE_HOUR = 12  # the sky is read at noon each day
IRREGULAR_VISIT_CHANCE = 0.7  # on a day outside the two gaps
GAP_DAYS = 14


@dataclass(frozen=True)
class Scenario:
    name: str
    visits: str  # "daily", "every 3 days" or "irregular"
    marks_guesses: bool = False  # says "I guessed" whenever they guess
    blind: bool = False  # knows nothing and learns nothing: answers every question at random
    answers_every_question_daily: bool = False  # the blind guesser's whole day


PATTERNS = (
    Scenario("daily", "daily"),
    Scenario("every 3 days", "every 3 days"),
    Scenario("irregular", "irregular"),
)
SCENARIOS = (
    *PATTERNS,
    Scenario("daily, marks guesses", "daily", marks_guesses=True),
    Scenario("blind guesser", "daily", blind=True, answers_every_question_daily=True),
)


@dataclass
class TrueMemory:
    """What the learner really remembers of one item. Its stability and difficulty follow
    FSRS-6's formulas (with the scheduler's parameters), driven by the learner's real recall and
    evaluated at their true recall; the true stability is `stability` × `multiplier`."""

    multiplier: float
    known_chance: float
    stability: float = 0.0  # days, in FSRS's units
    difficulty: float = 0.0
    last_retrieval: datetime | None = None  # None: never encoded

    def recall(self, now: datetime) -> float:
        """The chance that the learner recalls the item now: R = 0.9 ** (t / true stability)."""
        if self.last_retrieval is None:
            return 0.0
        days = max(0.0, (now - self.last_retrieval).total_seconds() / 86400)
        return 0.9 ** (days / (self.stability * self.multiplier))

    def retrieve(self, recalled: bool, now: datetime) -> None:
        """A retrieval strengthens the memory (FSRS's Good); a failure followed by the feedback
        encodes it again, weakly (FSRS's Again, but never below the stability of a first
        encoding after Again, 0.21 d, so repeated misses do not wear it down to nothing)."""
        rating = scheduling.GOOD if recalled else scheduling.AGAIN
        if self.last_retrieval is None:
            stability, difficulty = W[rating - 1], _initial_difficulty(rating)
        else:
            days = (now - self.last_retrieval).total_seconds() / 86400
            stability = _next_stability(self, rating, days, self.recall(now))
            difficulty = _next_difficulty(self.difficulty, rating)
        if not recalled:
            stability = max(stability, W[0])
        self.stability, self.difficulty, self.last_retrieval = stability, difficulty, now


# FSRS-6's formulas (as py-fsrs writes them), for the true memory only: the site's memory
# states always come from practice.scheduling.review.
W = scheduling.PARAMETERS


def _initial_difficulty(rating: int, *, clamp: bool = True) -> float:
    difficulty = W[4] - math.exp(W[5] * (rating - 1)) + 1
    return min(10.0, max(1.0, difficulty)) if clamp else difficulty


def _next_difficulty(difficulty: float, rating: int) -> float:
    change = -W[6] * (rating - 3)
    damped = difficulty + (10.0 - difficulty) * change / 9.0
    reverted = W[7] * _initial_difficulty(scheduling.EASY, clamp=False) + (1 - W[7]) * damped
    return min(10.0, max(1.0, reverted))


def _next_stability(memory: TrueMemory, rating: int, days: float, recall: float) -> float:
    stability, difficulty = memory.stability, memory.difficulty
    if days < 1:  # the same day: FSRS-6's short-term formula
        increase = math.exp(W[17] * (rating - 3 + W[18])) * stability ** -W[19]
        if rating >= scheduling.HARD:
            increase = max(increase, 1.0)
        return max(0.001, stability * increase)
    if rating == scheduling.AGAIN:
        forgotten = (
            W[11]
            * difficulty ** -W[12]
            * ((stability + 1) ** W[13] - 1)
            * math.exp((1 - recall) * W[14])
        )
        return max(0.001, min(forgotten, stability / math.exp(W[17] * W[18])))
    growth = math.exp(W[8]) * (11 - difficulty) * stability ** -W[9]
    return max(0.001, stability * (1 + growth * (math.exp((1 - recall) * W[10]) - 1)))


@dataclass
class Star:
    """One question: what the site stores for it, and the learner's true memory of it."""

    index: int
    lesson: int
    truth: TrueMemory
    state: MemoryState | None = None
    evidence: sky.Evidence = field(default_factory=sky.Evidence)


@dataclass
class Tally:
    """What one or many learners' 90 days add up to."""

    learners: int = 0
    ever_lit: list[int] = field(default_factory=list)  # per learner, after 90 days
    days_to_all_lit: list[int | None] = field(default_factory=list)  # per learner
    days_first_lit: list[int] = field(default_factory=list)  # per star ever lit
    lit_star_days: int = 0
    lit_star_days_recalled: int = 0  # true R >= 0.9
    lit_star_days_below_half: int = 0  # true R < 0.5
    lit_star_days_due: int = 0  # shown lit and due (a lit star that came due stays lit)
    lit_star_days_not_due_recalled: int = 0  # not due, true R >= 0.9
    lit_true_recall_sum: float = 0.0
    review_answers: int = 0  # scheduled answers in /review
    review_recalled: int = 0
    review_right: int = 0
    round_answers: int = 0  # scheduled first-pass answers of lesson rounds
    round_recalled: int = 0
    practice_answers: int = 0
    lightings: int = 0
    lucky_lightings: int = 0  # lit by an answer that was a guess

    def add(self, other: Tally) -> None:
        for name, value in vars(other).items():
            if isinstance(value, list):
                getattr(self, name).extend(value)
            else:
                setattr(self, name, getattr(self, name) + value)


@dataclass(frozen=True)
class Answer:
    correct: bool
    recalled: bool  # truly recalled, not a lucky guess
    rating: int


def visit_days(visits: str, rng: random.Random) -> set[int]:
    """The days (0 to 89) a learner visits: every day; every third day; or irregularly, on
    about half the days, with two gaps of 14 days."""
    if visits == "daily":
        return set(range(DAYS))
    if visits == "every 3 days":
        return set(range(0, DAYS, 3))
    first_gap = rng.randint(10, 30)
    second_gap = rng.randint(first_gap + GAP_DAYS + 7, DAYS - GAP_DAYS - 5)
    gaps = set(range(first_gap, first_gap + GAP_DAYS)) | set(
        range(second_gap, second_gap + GAP_DAYS)
    )
    return {0} | {
        day for day in range(1, DAYS) if day not in gaps and rng.random() < IRREGULAR_VISIT_CHANCE
    }


class Learner:
    """One simulated learner, the site's records of their 24 stars, and what they add up to."""

    def __init__(
        self,
        scenario: Scenario,
        rng: random.Random,
        item_effects: list[tuple[float, float]],
        config: SchedulerSettings,
    ) -> None:
        self.scenario, self.rng, self.config = scenario, rng, config
        self.tally = Tally(learners=1)
        learner_known = rng.gauss(0, KNOWN_SPREAD_LEARNER)
        learner_stability = rng.gauss(0, STABILITY_SPREAD_LEARNER)
        self.stars: list[Star] = []
        for index, (item_known, item_stability) in enumerate(item_effects):
            log_odds = math.log(KNOWN_AFTER_READING / (1 - KNOWN_AFTER_READING))
            log_odds += learner_known + item_known
            truth = TrueMemory(
                multiplier=math.exp(
                    learner_stability + item_stability + rng.gauss(0, STABILITY_SPREAD_PAIR)
                ),
                known_chance=0.0 if scenario.blind else 1 / (1 + math.exp(-log_odds)),
            )
            self.stars.append(Star(index, index // QUESTIONS_PER_LESSON, truth))
        self.visit_days = visit_days(scenario.visits, rng)
        self.lessons_started = 0
        self.all_lit_on: int | None = None

    def live(self) -> Tally:
        """90 days: the visits in the evenings, the sky read at every noon after the first."""
        for day in range(DAYS):
            if day > 0:
                self.read_the_sky(START + timedelta(days=day, hours=SAMPLE_HOUR))
            if day in self.visit_days:
                hours = VISIT_HOUR + self.rng.uniform(-VISIT_SPREAD_HOURS, VISIT_SPREAD_HOURS)
                self.visit(day, START + timedelta(days=day, hours=hours))
        self.read_the_sky(START + timedelta(days=DAYS, hours=SAMPLE_HOUR))
        lit_ats = [star.evidence.lit_at for star in self.stars if star.evidence.lit_at]
        self.tally.ever_lit.append(len(lit_ats))
        self.tally.days_first_lit.extend((lit_at - START).days for lit_at in lit_ats)
        self.tally.days_to_all_lit.append(self.all_lit_on)
        return self.tally

    def visit(self, day: int, now: datetime) -> None:
        """/review first, then the next lesson's round while lessons are left to start; the
        blind guesser also answers every other started question."""
        now = self.review(now)
        if self.lessons_started < LESSONS:
            lesson = [star for star in self.stars if star.lesson == self.lessons_started]
            now = self.lesson_round(lesson, now, first=True)
            self.lessons_started += 1
        if self.scenario.answers_every_question_daily:
            self.practise_again(now)
        if self.all_lit_on is None and all(star.evidence.lit_at for star in self.stars):
            self.all_lit_on = day

    def answer(self, star: Star, now: datetime, *, scheduled: bool) -> Answer:
        """The learner answers the star's question. A scheduled answer moves its memory as the
        site does (`services._writes_for`: the evidence first, then the FSRS state, then
        `due_until_lit`); a practice one, given after the answer was shown, changes nothing."""
        recalled = self.rng.random() < star.truth.recall(now)
        correct = recalled or self.rng.random() < GUESS_RATE
        guessed = not recalled and self.scenario.marks_guesses
        rating = scheduling.rating_for_answer(correct, guessed=guessed)
        if not scheduled:
            self.tally.practice_answers += 1
            return Answer(correct, recalled, rating)
        outcome = sky.outcome_of(rating, correct)
        was_lit = star.evidence.level == sky.CONFIRMED
        new_state = scheduling.review(star.state, rating, now, self.config)
        star.evidence = star.evidence.after(outcome, guess_rate=GUESS_RATE, now=now)
        due = sky.due_until_lit(new_state.due, new_state.last_review, star.evidence.level)
        star.state = replace(new_state, due=due)
        if star.evidence.level == sky.CONFIRMED and not was_lit:
            self.tally.lightings += 1
            self.tally.lucky_lightings += not recalled
        if not self.scenario.blind:
            star.truth.retrieve(recalled, now)
        return Answer(correct, recalled, rating)

    def review(self, now: datetime) -> datetime:
        """/review as the site runs it: the due item least likely recalled first
        (`selectors.first_due`), in sets of eight, each set ending with the items it rated
        Again asked once more as practice; set after set until nothing is due."""
        answered: set[int] = set()  # a guard: an answer always moves the due date on
        while True:
            missed: list[Star] = []
            for _ in range(REVIEW_SET_SIZE):
                due = [s for s in self.stars if self.is_due(s, now) and s.index not in answered]
                if not due:
                    break
                star = min(due, key=lambda s: self.review_rank(s, now))
                answer = self.answer(star, now, scheduled=True)
                self.tally.review_answers += 1
                self.tally.review_right += answer.correct
                self.tally.review_recalled += answer.recalled
                answered.add(star.index)
                if answer.rating == scheduling.AGAIN:
                    missed.append(star)
                now += ANSWER_TIME
            for star in missed:
                self.answer(star, now, scheduled=False)
                now += ANSWER_TIME
            if not any(self.is_due(s, now) and s.index not in answered for s in self.stars):
                return now

    @staticmethod
    def is_due(star: Star, now: datetime) -> bool:
        return star.state is not None and star.state.due <= now

    def review_rank(self, star: Star, now: datetime) -> tuple[float, datetime, int]:
        assert star.state is not None
        return scheduling.retrievability(star.state, now, self.config), star.state.due, star.index

    def lesson_round(self, stars: list[Star], now: datetime, *, first: bool) -> datetime:
        """A lesson's round: scheduled first-pass answers in the lesson's order, then each one
        answered wrong asked once more, as practice. The first round begins with the reading."""
        if first:
            for star in stars:
                if self.rng.random() < star.truth.known_chance:
                    star.truth.retrieve(True, now)  # read and understood
            now += READING_TIME
        missed = []
        for star in stars:
            answer = self.answer(star, now, scheduled=True)
            self.tally.round_answers += 1
            self.tally.round_recalled += answer.recalled
            if not answer.correct:
                missed.append(star)
            now += ANSWER_TIME
        for star in missed:
            self.answer(star, now, scheduled=False)
            now += ANSWER_TIME
        return now

    def practise_again(self, now: datetime) -> datetime:
        """The blind guesser's "Practise again" rounds: in each started lesson, every question
        not answered in this visit yet, so that each is answered (at random) every day."""
        for lesson in range(self.lessons_started):
            stars = [
                star
                for star in self.stars
                if star.lesson == lesson
                and star.state is not None
                and star.state.last_review is not None
                and now - star.state.last_review >= timedelta(hours=6)
            ]
            if stars:
                now = self.lesson_round(stars, now, first=False)
        return now

    def read_the_sky(self, noon: datetime) -> None:
        """Count the stars shown lit (`sky.star_state`) and how well the learner truly
        recalls them."""
        for star in self.stars:
            if star.state is None:
                continue
            shown = sky.star_state(
                star.state,
                noon,
                self.config,
                evidence=star.evidence.level,
                missed=star.evidence.missed,
            )
            if shown.word != sky.LIT:
                continue
            recall = star.truth.recall(noon)
            self.tally.lit_star_days += 1
            self.tally.lit_true_recall_sum += recall
            self.tally.lit_star_days_recalled += recall >= 0.9
            self.tally.lit_star_days_below_half += recall < 0.5
            self.tally.lit_star_days_due += shown.is_due
            self.tally.lit_star_days_not_due_recalled += not shown.is_due and recall >= 0.9


def item_effects(rng: random.Random) -> list[tuple[float, float]]:
    """Each item's effect on the chance that reading encodes it and on its true stability
    (log scale), the same for every learner."""
    return [
        (rng.gauss(0, KNOWN_SPREAD_ITEM), rng.gauss(0, STABILITY_SPREAD_ITEM)) for _ in range(STARS)
    ]


def run_scenario(scenario: Scenario, learners: int, config: SchedulerSettings) -> Tally:
    """`learners` learners of one scenario, each with its own seeded random stream."""
    effects = item_effects(random.Random(f"{SEED}:items"))
    total = Tally()
    for number in range(learners):
        rng = random.Random(f"{SEED}:{scenario.name}:{number}")
        total.add(Learner(scenario, rng, effects, config).live())
    return total


def percentile(values: list[int], share: float) -> int:
    """The nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def median_day(days: list[int | None]) -> str:
    """The median of the days, a learner who never got there counting as later than any."""
    ordered = sorted(days, key=lambda day: math.inf if day is None else day)
    middle = ordered[(len(ordered) - 1) // 2]
    return "never" if middle is None else str(middle)


def share(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "-"


def per_day(count: int, tally: Tally) -> str:
    return f"{count / (tally.learners * DAYS):.2f}"


ROWS: list[tuple[str, Callable[[Tally], str]]] = [
    (
        "stars ever lit d90: median / p95",
        lambda t: f"{statistics.median(t.ever_lit):g} / {percentile(t.ever_lit, 0.95)}",
    ),
    ("  per star (chance ever lit)", lambda t: share(sum(t.ever_lit), STARS * t.learners)),
    ("lit star-days truly R >= 0.9", lambda t: share(t.lit_star_days_recalled, t.lit_star_days)),
    ("  lit star-days that were due", lambda t: share(t.lit_star_days_due, t.lit_star_days)),
    (
        "  not due: truly R >= 0.9",
        lambda t: share(t.lit_star_days_not_due_recalled, t.lit_star_days - t.lit_star_days_due),
    ),
    ("  lit star-days truly R < 0.5", lambda t: share(t.lit_star_days_below_half, t.lit_star_days)),
    (
        "  mean true R of lit star-days",
        lambda t: f"{t.lit_true_recall_sum / t.lit_star_days:.3f}" if t.lit_star_days else "-",
    ),
    ("  stars shown lit, mean per day", lambda t: per_day(t.lit_star_days, t)),
    ("/review answers truly recalled (0.9)", lambda t: share(t.review_recalled, t.review_answers)),
    ("  /review answers right", lambda t: share(t.review_right, t.review_answers)),
    (
        "all scheduled answers truly recalled",
        lambda t: share(t.review_recalled + t.round_recalled, t.review_answers + t.round_answers),
    ),
    ("scheduled answers per day", lambda t: per_day(t.review_answers + t.round_answers, t)),
    ("practice answers per day", lambda t: per_day(t.practice_answers, t)),
    (
        "a star's first lighting: median day",
        lambda t: f"{statistics.median(t.days_first_lit):g}" if t.days_first_lit else "-",
    ),
    ("all 24 ever lit: median day", lambda t: median_day(t.days_to_all_lit)),
    (
        "  share of learners within 90 days",
        lambda t: share(sum(day is not None for day in t.days_to_all_lit), t.learners),
    ),
    ("lightings that were lucky guesses", lambda t: share(t.lucky_lightings, t.lightings)),
]


def report(
    tallies: dict[str, Tally], seconds: float, workers: int, config: SchedulerSettings
) -> str:
    """The figures, one column a scenario, then a verdict on each of the three goals."""
    width = 13
    names = {
        "daily": "daily",
        "every 3 days": "every 3 d",
        "irregular": "irregular",
        "daily, marks guesses": "daily,marks",
        "blind guesser": "blind",
    }
    lines = [
        f"LightMySky simulation: {LEARNERS} learners a scenario, {DAYS} days, {STARS} "
        f"four-choice question stars, seed {SEED}",
        f"FSRS retention {config.desired_retention}, fuzzing off; stars light at odds "
        f"{math.exp(sky.LIGHT_SCORE):g} (slip {sky.SLIP}), unlit ones come back within "
        f"{sky.UNLIT_MAX_INTERVAL.days} d",
        "",
        f"{'':38}" + "".join(f"{names[name]:>{width}}" for name in tallies),
    ]
    for label, figure in ROWS:
        lines.append(f"{label:38}" + "".join(f"{figure(t):>{width}}" for t in tallies.values()))

    blind = tallies["blind guesser"]
    blind_median = statistics.median(blind.ever_lit)
    blind_per_star = sum(blind.ever_lit) / (STARS * blind.learners)
    honest = {
        name: tallies[name].lit_star_days_recalled / max(tallies[name].lit_star_days, 1)
        for name in (pattern.name for pattern in PATTERNS)
    }
    daily_days = median_day(tallies["daily"].days_to_all_lit)

    def verdict(met: bool) -> str:
        return "PASS" if met else "MISS"

    lines += [
        "",
        f"{verdict(blind_median <= 1)}  blind guesser's stars ever lit: median {blind_median:g} "
        f"of {STARS} (goal <= 1); {100 * blind_per_star:.1f} % a star (the rule's bound: 5 %)",
        f"{verdict(min(honest.values()) >= 0.9)}  lit star-days truly recalled (R >= 0.9): "
        + ", ".join(f"{name} {100 * value:.1f} %" for name, value in honest.items())
        + " (goal >= 90 % in each)",
        f"{verdict(daily_days != 'never' and int(daily_days) <= 14)}  daily visitors light all "
        f"{STARS} stars by day {daily_days} (median; goal <= 14)",
        "",
        f"took {seconds:.0f} s ({workers} processes)",
    ]
    return "\n".join(lines)


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lightmysky.settings")
    os.environ.setdefault("DEBUG", "1")
    import django

    django.setup()
    began = time.monotonic()
    config = replace(SchedulerSettings.from_django(), enable_fuzzing=False)
    workers = min(len(SCENARIOS), os.cpu_count() or 1)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {
            scenario.name: pool.submit(run_scenario, scenario, LEARNERS, config)
            for scenario in SCENARIOS
        }
        tallies = {name: future.result() for name, future in futures.items()}
    print(report(tallies, time.monotonic() - began, workers, config))


if __name__ == "__main__":
    main()
