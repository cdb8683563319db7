"""The learner's pages: a lesson's round of questions (and its missed ones once more), its
flashcards, /review's sets of due items, the sky and its table, the star words page, /progress
with its export, import, forgetting and moving to another device, and a worksheet's paper
answers. Each view reads and writes through practice.services and practice.selectors; htmx
requests get the part of the page that changed."""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta
from functools import wraps
from urllib.parse import urlencode

from django.conf import settings
from django.db import IntegrityError
from django.http import Http404, HttpResponse, HttpResponseRedirect, StreamingHttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST, require_safe
from django.views.decorators.vary import vary_on_cookie, vary_on_headers
from django_htmx.http import push_url

from lessons.models import ContentVersion, Flashcard, Lesson, Question
from lessons.selectors import lesson_page, normalise_worksheet_code, page_or_redirect
from lightmysky.lib.addresses import client_address
from lightmysky.lib.negotiation import page_or_twin
from lightmysky.lib.numbers import small_int
from lightmysky.lib.pagecache import cache_for_visitors_by
from lightmysky.lib.qr import qr_svg
from lightmysky.ratelimit import address_key, limit_posts, retry_after, too_many_requests
from practice import (
    drawing,
    progress_file,
    scheduling,
    selectors,
    services,
    sky,
    submissions,
)
from practice.models import (
    LEARNER_PK_SESSION_KEY,
    LEARNER_SESSION_KEY,
    Learner,
    LearnerGone,
    Memory,
    Review,
    Round,
    RoundProgress,
    SessionEnded,
    new_round_key,
)
from practice.selectors import LearnerRequest, learning, sky_map, stars
from practice.submissions import (
    Attempt,
    BadPaperAnswers,
    BadSubmission,
    FlashcardRating,
    QuestionAnswer,
    read_attempt,
    read_flashcard_rating,
    read_paper_answers,
    read_question_answer,
)

ROUND_TEMPLATE = "practice/round.html"
REVIEW_SET_SESSION_KEY = "review_batch"  # its old name: sessions already hold it
IMPORT_OUTCOME_SESSION_KEY = "import_outcome"  # the last import's result, until it is shown


def recover_lost_learner(view):
    """If the session names a learner that is gone, start afresh once instead of failing.

    A learner pruned or erased on another device leaves this browser's session behind: the
    request is served again for a new learner. A learner erased by "Forget everything" in this
    same browser, while this request was on its way, ends its session too: the request is
    refused (409) and nothing is recorded for anyone.
    """

    @wraps(view)
    def wrapped(request: LearnerRequest, *args, **kwargs) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except SessionEnded:
            return _erased_elsewhere(request)
        except (LearnerGone, IntegrityError):
            pk = request.session.get(LEARNER_PK_SESSION_KEY)
            if pk is None or Learner.objects.filter(pk=pk).exists():
                raise
            key = request.session.session_key
            if key is None or not request.session.exists(key):
                return _erased_elsewhere(request)
            services.learner_session_clear(request.session)
            request.__dict__.pop("learner", None)
            return view(request, *args, **kwargs)

    return wrapped


def _erased_elsewhere(request: LearnerRequest) -> HttpResponse:
    context = {
        "message": "Everything stored for this browser was just erased, in another tab or window.",
        "back_url": reverse("practice:progress"),
        "target": "main",
    }
    return render(request, "practice/bad_submission.html", context, status=409)


def _learner_or_create(request: LearnerRequest, now) -> Learner:
    csrf = request.COOKIES.get(settings.CSRF_COOKIE_NAME)
    learner = services.learner_get_or_create(
        session=request.session,
        # With the address: a page on a sibling domain can set a browser's CSRF cookie, and
        # would then share the first answers' learner from anywhere else.
        browser_secret=f"{csrf} {address_key(client_address(request))}" if csrf else None,
        now=now,
        session_named=request.COOKIES.get(settings.SESSION_COOKIE_NAME),
    )
    request.learner = learner  # the header's sky counter reads it
    return learner


def recorded(request: LearnerRequest, created: bool) -> None:
    """Count an answer this request recorded (not one sent again) for /metrics, which the
    request log counts when the response leaves (lightmysky.middleware)."""
    request.answers_recorded = getattr(request, "answers_recorded", 0) + created


def _is_preview(request: LearnerRequest, lesson: Lesson) -> bool:
    """A staff user's answer, or any answer to a draft (only staff can open one): recorded as
    a preview, so the editors' analytics never count it."""
    return not lesson.is_published or request.user.is_staff


def _page_or_partial(request: LearnerRequest, template: str, partial: str) -> str:
    """The fragment for htmx swaps; the whole page otherwise, also when htmx restores history."""
    if request.htmx and not request.htmx.history_restore_request:
        return f"{template}#{partial}"
    return template


def feedback_for(
    review: Review,
    question: Question,
    progress: RoundProgress | None = None,
    *,
    differ_from: str | None = None,
    on_paper: bool = False,
) -> dict:
    """What the learner sees after answering: each choice marked, with the explanations, in
    the order and with the letters the question was shown with (on paper: as written)."""
    if progress is not None:
        differ_from = progress.first_showing(question)
    shown = (
        question.labelled_choices
        if on_paper
        else question.choices_shown(review.attempt, differ_from=differ_from)
    )
    picked = set(review.answer.split(",")) if review.answer else set()
    choices = [choice | {"picked": choice["id"] in picked} for choice in shown]
    comes_back = bool(
        progress
        and not review.correct
        and review.round_step is not None
        and review.round_step < len(progress.questions)
    )
    return {
        "review": review,
        "question": question,
        "choices": choices,
        "right_choices": [choice for choice in choices if choice["correct"]],
        "comes_back": comes_back,
    }


def bad_submission(
    request: LearnerRequest, message: str, *, back_url: str, target: str
) -> HttpResponse:
    """A 400 that says what was wrong; the htmx version replaces the card that was posted."""
    context = {"message": message, "back_url": back_url, "target": target}
    template = "practice/bad_submission.html"
    return render(request, _page_or_partial(request, template, "error-card"), context, status=400)


@vary_on_headers("HX-Request")
@require_http_methods(["GET", "HEAD", "POST"])
@never_cache
@limit_posts("answer")
@recover_lost_learner
def practice_round(
    request: LearnerRequest, subject: str, public_id: str, slug: str | None = None
) -> HttpResponse:
    if request.method == "POST":
        return _round_answer(request, public_id)
    page = page_or_redirect(request, subject, public_id, slug, "practice:round")
    if isinstance(page, HttpResponse):
        return page
    lesson, questions = page.lesson, page.questions
    now = timezone.now()
    learner = selectors.learner_for_request(request)
    progress = RoundProgress.load(learner=learner, lesson=lesson, questions=questions)
    whole_page = not request.htmx or request.htmx.history_restore_request
    context: dict = {"lesson": lesson, "progress": progress}
    if whole_page:  # the lesson's stars with the header's counter, read at once
        context |= stars.lesson_stars(learner=learner, page=page, now=now)

    def memories() -> selectors.Memories:
        """The learner's memories of the lesson (read with the stars, or now), for a new
        round's order and the round's end."""
        if "memories" not in context:
            context["memories"] = selectors.lesson_memories(learner=learner, lesson=lesson)
        return context["memories"]

    answered = small_int(request.GET.get("answered"))
    # A question's own address (?q=3): once answered, it shows its answer, never a fresh form.
    asked = small_int(request.GET.get("q"))
    if (answered or asked) and progress.left(now):  # an old tab: its round gave way to a new one
        return HttpResponseRedirect(lesson.get_practice_url())
    if asked and 0 < asked <= progress.step and not progress.finished:
        answered, context["already_answered"] = asked, True
    if answered and 0 < answered <= progress.step:
        review = progress.reviews[answered - 1]
        context["feedback"] = feedback_for(review, _question_of(review, questions), progress)
    elif progress.finished and "missed" in request.GET:
        context |= _missed_practice(request, learner, lesson, progress)
    elif progress.finished and "summary" in request.GET:
        context["round_end"] = True  # the round's summary, on the lesson's constellation
    elif (
        request.GET.get("new") or progress.round is None or progress.finished or progress.left(now)
    ):
        round_key = _next_round_key(request, lesson, after=progress.round)
        progress = RoundProgress(
            questions=selectors.new_round_questions(
                questions=questions, memories=memories(), now=now
            )
        )
        # Before its first answer, a round says which answers would be practice (an answer
        # within the sitting of the last one: a /review set, a round just done).
        recent = selectors.question_answers_in_sitting(learner=learner, lesson=lesson, now=now)
        context["practice_until"] = stars.practice_until(recent, now)
        first = progress.current
        seen = first is not None and any(review.question_id == first.pk for review in recent)
        context |= _question_form(lesson, progress, round_key, answer_seen=seen)
        context["progress"] = progress
    else:
        asking = None if progress.retrying else progress.current  # a retry is practice anyway
        seen = selectors.answered_in_sitting(learner=learner, question=asking, now=now)
        context |= _question_form(lesson, progress, progress.round.key, answer_seen=seen)
    if context.get("round_end") and "constellation" not in context:
        context["constellation"] = stars.constellation_for(
            learner=learner, lesson=lesson, items=page.items, now=now, memories=memories()
        )
    if context.get("round_end"):
        context["outcome"] = stars.round_outcome(progress, context["constellation"], now)
    template = _page_or_partial(request, ROUND_TEMPLATE, "practice-card")
    return render(request, template, context)


def _next_round_key(request: LearnerRequest, lesson: Lesson, *, after: Round | None) -> str:
    """The key of the round this browser starts after its latest one: the same on every
    reload until its first answer (so its first question keeps its order)."""
    learner = selectors.learner_for_request(request)
    if learner is not None:
        owner = learner.public_id
    else:  # a visitor: the CSRF secret its form carries (and, from now on, its cookie)
        get_token(request)
        owner = request.META.get("CSRF_COOKIE") or ""
    if not owner:
        return new_round_key()
    return submissions.stable_key("round", owner, lesson.pk, after.key if after else "")


def _missed_practice(
    request: LearnerRequest, learner: Learner | None, lesson: Lesson, progress: RoundProgress
) -> dict:
    """'Practise the ones I missed', after a round: each question it missed, once more, as
    practice (logged, never scheduled: its answer was shown in the round)."""
    missed = progress.missed_questions()
    number = max(small_int(request.GET.get("n")) or 1, 1)
    context: dict = {"missed": {"number": number, "total": len(missed)}}
    reviewed = small_int(request.GET.get("reviewed"))
    if learner is not None and reviewed and 0 < number <= len(missed):
        review = selectors.learner_review(
            learner=learner, pk=reviewed, question=missed[number - 1], practice=True
        )
        if review is not None:
            context["feedback"] = feedback_for(
                review, missed[number - 1], differ_from=_earlier_showing(review)
            )
            return context
    if number > len(missed) and learner is not None and progress.reviews:
        practised, right = selectors.practised_since(
            learner=learner, questions=missed, since=progress.reviews[-1].reviewed_at
        )
        context["missed"] |= {"answered": practised, "right": right}
    if number <= len(missed):
        question = missed[number - 1]
        nonce = submissions.new_nonce()
        token = submissions.issue_once(
            lesson_id=lesson.pk, kind="question", item_id=question.pk, practice=True, nonce=nonce
        )
        seed = submissions.once_attempt_key(nonce)
        # In another order than it was last shown in, as its verdict will read it.
        answered = next(r for r in progress.reviews if r.question_id == question.pk)
        earlier = selectors.last_attempt_key(answered)
        context |= {
            "question": question,
            "token": token,
            "choices": question.choices_shown(seed, differ_from=earlier),
        }
    return context


def _missed_practice_answer(
    request: LearnerRequest,
    lesson: Lesson,
    questions: list[Question],
    attempt: Attempt,
    question: Question,
) -> HttpResponse:
    url = lesson.get_practice_url()
    number = max(small_int(request.POST.get("n")) or 1, 1)
    try:
        answer = read_question_answer(request.POST, attempt, question)
    except BadSubmission as error:
        return bad_submission(request, str(error), back_url=url, target="practice-card")
    now = timezone.now()
    learner = _learner_or_create(request, now)
    review, created = services.review_answer(
        learner=learner,
        attempt=attempt,
        answer=answer,
        now=now,
        preview=_is_preview(request, lesson),
    )
    recorded(request, created)
    target = f"{url}?missed=1&n={number}&reviewed={review.pk}"
    if not request.htmx:
        return HttpResponseRedirect(target + "#feedback")
    progress = RoundProgress.load(learner=learner, lesson=lesson, questions=questions)
    missed = len(progress.missed_questions())
    context = {
        "lesson": lesson,
        "feedback": feedback_for(review, question, differ_from=_earlier_showing(review)),
        # how far along, unless the form's number is past the end (sent by hand)
        "missed": {"number": number, "total": missed if number <= missed else 0},
        "answer_status_only": True,  # the verdict, said; the round's strip is as it was
    }
    return push_url(render(request, f"{ROUND_TEMPLATE}#practice-card", context), target)


def _question_of(review: Review, questions: list[Question]) -> Question:
    return next(question for question in questions if question.pk == review.question_id)


def _question_form(
    lesson: Lesson, progress: RoundProgress, round_key: str, *, answer_seen: bool
) -> dict:
    """The round's current question, its token and choices; and whether its answer is practice
    because the learner saw its right answer within the sitting (`answer_seen`, the page's
    `practice`), which the page says, and then offers no "I guessed"."""
    question = progress.current
    if question is None:
        return {}
    token = submissions.issue_for_round(
        lesson_id=lesson.pk,
        question_id=question.pk,
        round_key=round_key,
        step=progress.step,
        # A round not begun yet begins with its first answer, in the order shown now.
        order=[q.pk for q in progress.questions] if progress.round is None else None,
    )
    choices = question.choices_shown(
        submissions.round_attempt_key(round_key, progress.step),
        differ_from=progress.first_showing(question),
    )
    return {
        "question": question,
        "token": token,
        "choices": choices,
        "practice": answer_seen,
    }


def _round_answer(request: LearnerRequest, public_id: str) -> HttpResponse:
    # Read with the ORM, not from the lesson's cached page data: an answer needs only its
    # questions, which the drafts' own staff may answer too.
    visible = Lesson.objects.all() if request.user.is_staff else Lesson.objects.published()
    questions = visible.questions_of(public_id)
    if not questions:
        raise Http404("No lesson has this address.")
    lesson = questions[0].lesson
    practice_url = lesson.get_practice_url()
    try:
        attempt = read_attempt(request.POST, lesson_id=lesson.pk)
        question = next((q for q in questions if q.pk == attempt.item_id), None)
        if attempt.kind == "question" and attempt.practice and question is not None:
            return _missed_practice_answer(request, lesson, questions, attempt, question)
        if attempt.kind != "question" or not attempt.round_key or question is None:
            raise BadSubmission("This answer is not for a question of this lesson's round.")
        if attempt.round_step and LEARNER_SESSION_KEY not in request.session:
            # Past its first step a round belongs to a learner this session names: without one
            # (erased by "Forget everything" a moment ago) there is nothing to carry on, and no
            # learner is made just to refuse the answer.
            raise BadSubmission(services.STALE_ROUND_ANSWER)
        answer = read_question_answer(request.POST, attempt, question)
    except BadSubmission as error:
        return bad_submission(request, str(error), back_url=practice_url, target="practice-card")

    now = timezone.now()
    try:
        review, progress, created = services.round_answer(
            learner=_learner_or_create(request, now),
            lesson=lesson,
            questions=questions,
            answer=answer,
            now=now,
            preview=_is_preview(request, lesson),
        )
    except BadSubmission as error:
        return bad_submission(request, str(error), back_url=practice_url, target="practice-card")
    recorded(request, created)
    number = (review.round_step or 0) + 1
    # A form sent again (Back, a double click, or another tab that answered this step first)
    # records nothing: the learner is told it was answered already.
    already_answered = not created or number < progress.step
    if not request.htmx:
        shown_as = "q" if already_answered else "answered"
        return HttpResponseRedirect(f"{practice_url}?{shown_as}={number}#feedback")
    page = lesson_page(lesson.public_id, ContentVersion.for_request(request))
    if page is None:  # deleted since its questions were read
        raise Http404("No lesson has this address.")
    context = stars.lesson_stars(learner=request.learner, page=page, now=now) | {
        "lesson": lesson,
        "progress": progress,
        "already_answered": already_answered,
        "feedback": feedback_for(review, question, progress),
        "oob_updates": True,
    }
    response = render(request, f"{ROUND_TEMPLATE}#practice-card", context)
    return push_url(response, f"{practice_url}?answered={number}")


@vary_on_headers("HX-Request")
@require_http_methods(["GET", "HEAD", "POST"])
@never_cache
@limit_posts("answer")
@recover_lost_learner
def flashcards(
    request: LearnerRequest, subject: str, public_id: str, slug: str | None = None
) -> HttpResponse:
    page = page_or_redirect(request, subject, public_id, slug, "practice:flashcards")
    if isinstance(page, HttpResponse):
        return page
    lesson = page.lesson
    cards = list(lesson.flashcards.all())
    url = lesson.get_flashcards_url()
    data = request.POST if request.method == "POST" else request.GET
    again = _cards_again(data.get("again", ""), cards)
    set_start = small_int(data.get("set"))  # the set's first rating (a review's id)
    if request.method == "POST":
        try:
            attempt = read_attempt(request.POST, lesson_id=lesson.pk)
            card = next((c for c in cards if c.pk == attempt.item_id), None)
            if attempt.kind != "flashcard" or card is None:
                raise BadSubmission("This rating is not for a flashcard of this lesson.")
            rating = read_flashcard_rating(request.POST, attempt, card)
        except BadSubmission as error:
            return bad_submission(request, str(error), back_url=url, target="flashcard-card")
        now = timezone.now()
        rated, created = services.review_answer(
            learner=_learner_or_create(request, now),
            attempt=attempt,
            answer=rating,
            now=now,
            preview=_is_preview(request, lesson),
        )
        recorded(request, created)
        if attempt.practice and card in again:  # shown again at the end of the set
            position = len(cards) + again.index(card)
        else:
            position = cards.index(card)
            if rating.rating == scheduling.AGAIN and card not in again:
                again.append(card)
        if position == 0:
            set_start = rated.pk
        next_url = _flashcards_url(url, position + 2, again, set_start) + f"&rated={rated.pk}"
        if not request.htmx:
            return HttpResponseRedirect(next_url)
        context = _flashcard_context(request, lesson, cards, position + 1, again, set_start, now)
        context |= {"rated": rated, "oob_updates": True}
        response = render(request, "practice/flashcards.html#flashcard-card", context)
        return push_url(response, next_url)
    now = timezone.now()
    last_rating = _rated(request, request.GET)
    if last_rating is not None and not last_rating.in_sitting(now):
        # A set's address kept past its sitting (a tab a phone restores days later) starts a
        # new set, whether it stood mid-set or at the end: a set is summed up from the ratings
        # of its sitting, and an old end would sum up none of them.
        return HttpResponseRedirect(url)
    position = max((small_int(request.GET.get("card")) or 1) - 1, 0)
    left_off = None
    if not request.GET:  # the set's own address, as the lesson links it
        learner = selectors.learner_for_request(request)
        left_off = selectors.flashcard_set_left_off(
            learner=learner, lesson=lesson, cards=cards, now=now
        )
    if left_off is not None:  # a set left part-way within the sitting goes on where it stood
        position, again, set_start = left_off
    context = _flashcard_context(request, lesson, cards, position, again, set_start, now)
    context |= {"rated": last_rating, "resumed": left_off is not None}
    return render(
        request, _page_or_partial(request, "practice/flashcards.html", "flashcard-card"), context
    )


def _rated(request: LearnerRequest, data) -> Review | None:
    """The flashcard rating the page before recorded (?rated=), to say what it did."""
    pk = small_int(data.get("rated"))
    learner = selectors.learner_for_request(request)
    if not pk or learner is None:
        return None
    return selectors.learner_review(learner=learner, pk=pk, flashcard__isnull=False)


def _cards_again(raw: str, cards: list[Flashcard]) -> list[Flashcard]:
    """The cards rated Again in this set (from the address), each once, in order."""
    by_id = {str(card.pk): card for card in cards}
    again: list[Flashcard] = []
    for part in raw.split(",")[: len(cards)]:
        card = by_id.get(part.strip())
        if card is not None and card not in again:
            again.append(card)
    return again


def _flashcards_url(url: str, number: int, again: list[Flashcard], set_start: int | None) -> str:
    query = f"?card={number}"
    if again:
        query += "&again=" + ",".join(str(card.pk) for card in again)
    if set_start:
        query += f"&set={set_start}"
    return url + query


def _flashcard_context(
    request: LearnerRequest,
    lesson: Lesson,
    cards: list[Flashcard],
    position: int,
    again: list[Flashcard],
    set_start: int | None,
    now: datetime,
) -> dict:
    """The set is the lesson's cards, then once more each card rated Again in it (practice:
    its answer was just seen). Its ratings are those from its first on (`set_start`)."""
    sequence = cards + again
    context: dict = {
        "lesson": lesson,
        "cards": cards,
        "position": position,
        "number": position + 1,
        "set_size": len(sequence),
        "again_ids": ",".join(str(card.pk) for card in again),
        "set_start": set_start,
    }
    learner = selectors.learner_for_request(request)
    if position >= len(sequence) and cards and learner is not None:
        # Each card's first rating in this set is the one its star took; one rated Again is
        # asked once more at the end, as practice.
        ratings = selectors.flashcard_set_ratings(
            learner=learner, lesson=lesson, set_start=set_start, now=now
        )
        first_ratings: dict[int | None, Review] = {}
        for review in ratings:
            first_ratings.setdefault(review.flashcard_id, review)
        context["summary"] = stars.sitting_summary(
            learner=learner, reviews=list(first_ratings.values()), now=now
        )
        context["practice_until"] = stars.practice_until(ratings, now)
    if position < len(sequence):
        card = sequence[position]
        practice = position >= len(cards)
        memory = (
            None
            if practice
            else selectors.flashcard_memory(learner=learner, flashcard=card, now=now)
        )
        # Its answer seen within the sitting: this rating will be practice too (services).
        seen = memory is not None and memory.answer_seen_at is not None
        context |= {
            "card": card,
            "practice": practice,
            "answer_seen": seen,
            "token": submissions.issue_once(
                lesson_id=lesson.pk,
                kind="flashcard",
                item_id=card.pk,
                practice=practice,
                nonce=submissions.set_nonce(again=practice),
            ),
        } | _ratings(memory, now, practice=practice or seen)
    return context


def _ratings(memory: Memory | None, now: datetime, *, practice: bool) -> dict:
    """The rating buttons (_rating_choices), and whether Hard, Good and Easy all bring the card
    back alike because its star is not lit yet (sky.UNLIT_MAX_INTERVAL), which the form says:
    three labels the same read as "the rating does not matter"."""
    ratings = _rating_choices(memory, now, practice=practice)
    not_lit = memory is None or memory.evidence != sky.CONFIRMED
    alike = len({label for _, _, label in ratings[1:]}) == 1
    return {"ratings": ratings, "ratings_alike_until_lit": not practice and not_lit and alike}


def _rating_choices(
    memory: Memory | None, now: datetime, *, practice: bool
) -> list[tuple[int, str, str]]:
    """Each rating with what it does next: (3, "Good", "3 days"), as rating the card would set
    it (within days while its star is unlit). Again brings the card back once at the end of the
    set, on the flashcards page and in the review alike."""
    if practice:
        return [(value, name, "practice") for value, name in scheduling.RATINGS.items()]
    evidence = memory.evidence_now if memory else sky.Evidence()
    dues = sky.flashcard_dues(memory.memory_state if memory else None, evidence, now)
    return [
        (
            value,
            name,
            "again at the end" if value == scheduling.AGAIN else _interval(dues[value] - now),
        )
        for value, name in scheduling.RATINGS.items()
    ]


def _interval(delta: timedelta) -> str:
    minutes = max(1, round(delta.total_seconds() / 60))
    if minutes < 60:
        return f"{minutes} min"
    if minutes < 24 * 60:
        return f"{round(minutes / 60)} h"
    days = round(minutes / (24 * 60))
    if days < 31:
        return f"{days} day{'s' if days != 1 else ''}"
    if days < 365:
        return f"{round(days / 30.4)} mo"
    return f"{days / 365:.1f} yr".replace(".0 ", " ")


@vary_on_headers("HX-Request")
@require_http_methods(["GET", "HEAD", "POST"])
@never_cache
@limit_posts("answer")
@recover_lost_learner
def review(request: LearnerRequest) -> HttpResponse:
    now = timezone.now()
    learner = selectors.learner_for_request(request)
    review_set = _review_set(request, now)
    if request.method == "POST":
        if "more" in request.POST:
            request.session.pop(REVIEW_SET_SESSION_KEY, None)
            return redirect("practice:review")
        return _review_answer(request, now)

    set_done = review_set["done"] if learner else 0
    due_count = 0
    context: dict = {"set_limit": selectors.REVIEW_SET_SIZE, "set_done": set_done}
    if learner:
        context["sky_counter"] = counter = stars.sky_counter(learner=learner, now=now)
        due_count = counter.due
    context |= {
        "due_count": due_count,
        "set_size": _review_set_size(set_done, due_count),
        "next_set_size": _review_set_size(0, due_count),
    }
    reviewed = small_int(request.GET.get("reviewed"))
    if learner is not None and reviewed:
        done = selectors.learner_review(learner=learner, pk=reviewed)
        if done is not None and done.question is not None:
            context["feedback"] = feedback_for(
                done, done.question, differ_from=_earlier_showing(done) if done.practice else None
            )
            context["report_lesson"] = done.lesson
    elif (rated := _rated(request, request.GET)) and rated.in_sitting(now):
        context |= {"rated": rated, "oob_updates": bool(request.htmx)}
    if "feedback" not in context:
        first = selectors.first_due(learner=learner, now=now) if learner else None
        if first and set_done < selectors.REVIEW_SET_SIZE:
            context |= _review_item_form(first)
        elif learner and (retry := _first_still_missed(learner, review_set["missed"])):
            context |= _review_item_form(retry, practice=True)
        elif learner and set_done:
            context["summary"] = stars.sitting_summary(
                learner=learner,
                reviews=selectors.review_set_answers(
                    learner=learner, since=datetime.fromisoformat(review_set["since"])
                ),
                now=now,
            )
        if learner and due_count and (not first or set_done >= selectors.REVIEW_SET_SIZE):
            # Due items answered within the sitting wait (asked now, they would be practice).
            seen, asked_from = selectors.due_answers_seen(learner=learner, now=now)
            if seen >= due_count:
                context |= {"asked_from": asked_from, "seen_count": seen}
            else:
                context |= {
                    "due_count": due_count - seen,
                    "next_set_size": _review_set_size(0, due_count - seen),
                }
        if "item" not in context and not due_count:
            context["next_due"] = (
                selectors.next_due_at(learner=learner, now=now) if learner else None
            )
            context["has_progress"] = learner is not None
            context["next_step"] = learning.next_step(
                learner=learner,
                due=0,
                progress=learning.lesson_progress(learner=learner, now=now),
            )
    template = _page_or_partial(request, "practice/review.html", "review-card")
    return render(request, template, context)


def _review_set_size(done: int, due: int) -> int:
    """How many items this set holds: those done and those still due, up to a set's size."""
    return min(selectors.REVIEW_SET_SIZE, done + due)


def _review_set(request: LearnerRequest, now) -> dict:
    """This sitting's set: how many reviews are done, since when, and what was missed (to ask
    once more at the end). A set starts afresh a sitting (sky.SITTING) after it began."""
    review_set = request.session.get(REVIEW_SET_SESSION_KEY)
    fresh = {"done": 0, "since": now.isoformat(), "missed": []}
    if not isinstance(review_set, dict):
        return fresh
    try:
        since = datetime.fromisoformat(review_set["since"])
        done, missed = int(review_set.get("done", 0)), list(review_set.get("missed", []))
    except (KeyError, TypeError, ValueError):
        return fresh
    if now - since >= sky.SITTING:
        return fresh
    return {"done": done, "since": review_set["since"], "missed": missed}


def _first_still_missed(learner: Learner, missed: list):
    """The first item missed in this set and not yet asked again (to ask at the set's end)."""
    for kind, item_id in missed:
        memory = selectors.memory_of_item(learner=learner, kind=kind, item_id=item_id)
        if memory is not None:
            return memory
    return None


def _review_item_form(memory, *, practice: bool = False) -> dict:
    # The same until the item is answered: a reload is the same attempt, in the same order.
    nonce = submissions.stable_key(
        "review", memory.learner_id, memory.kind, memory.item.pk, memory.last_review, practice
    )
    token = submissions.issue_once(
        lesson_id=memory.lesson_id,
        kind=str(memory.kind),
        item_id=memory.item.pk,
        practice=practice,
        nonce=nonce,
    )
    context = {
        "item": memory,
        "question": memory.question,
        "card": memory.flashcard,
        "token": token,
        "practice": practice,
    }
    if memory.flashcard_id:
        context |= _ratings(memory, timezone.now(), practice=practice)
    if memory.question_id:
        # Asked again after a miss: in another order than the miss was shown in.
        earlier = selectors.last_attempt_key(memory) if practice else None
        seed = submissions.once_attempt_key(nonce)
        context["choices"] = memory.question.choices_shown(seed, differ_from=earlier)
    return context


def _earlier_showing(review: Review) -> str | None:
    """The attempt before this one of the same item: the one a practice re-ask differs from."""
    return selectors.last_attempt_key(review, before=review)


def _review_answer(request: LearnerRequest, now) -> HttpResponse:
    try:
        attempt = read_attempt(request.POST)
        if attempt.round_key:
            raise BadSubmission(
                "This answer belongs to a practice round, not to the review. "
                "Go back to the round to answer it."
            )
        answer: QuestionAnswer | FlashcardRating
        if attempt.kind == "question":
            question = _published_item(Question, attempt.item_id, attempt.lesson_id)
            answer = read_question_answer(request.POST, attempt, question)
        elif attempt.kind == "flashcard":
            card = _published_item(Flashcard, attempt.item_id, attempt.lesson_id)
            answer = read_flashcard_rating(request.POST, attempt, card)
        else:
            raise BadSubmission("This form is not for a question or a flashcard.")
    except BadSubmission as error:
        return bad_submission(
            request, str(error), back_url=reverse("practice:review"), target="review-card"
        )

    learner = _learner_or_create(request, now)
    review, created = services.review_answer(
        learner=learner,
        attempt=attempt,
        answer=answer,
        now=now,
        preview=request.user.is_staff,  # the review queue holds published lessons only
    )
    recorded(request, created)
    review_set, item = _review_set(request, now), [attempt.kind, attempt.item_id]
    if attempt.practice:
        review_set["missed"] = [missed for missed in review_set["missed"] if missed != item]
    elif created:
        review_set["done"] += 1
        if review.rating == scheduling.AGAIN:
            review_set["missed"].append(item)
    if attempt.practice or created:
        request.session[REVIEW_SET_SESSION_KEY] = review_set
    review_url = reverse("practice:review")
    if review.flashcard_id:  # the next item, told what the rating did
        return HttpResponseRedirect(f"{review_url}?rated={review.pk}")
    if not request.htmx:
        return HttpResponseRedirect(f"{review_url}?reviewed={review.pk}#feedback")
    differ_from = _earlier_showing(review) if review.practice else None
    counter = stars.sky_counter(learner=learner, now=now)
    context = {
        "feedback": feedback_for(review, question, differ_from=differ_from),
        "report_lesson": question.lesson,
        "set_done": review_set["done"],
        "sky_counter": counter,
        "due_count": counter.due,
        "set_size": _review_set_size(review_set["done"], counter.due),
        "oob_updates": True,
    }
    response = render(request, "practice/review.html#review-card", context)
    return push_url(response, f"{review_url}?reviewed={review.pk}")


def _published_item(model, item_id: int, lesson_id: int):
    item = (
        model.objects.filter(
            pk=item_id, lesson_id=lesson_id, lesson__status=Lesson.Status.PUBLISHED
        )
        .select_related("lesson__subject")
        .first()
    )
    if item is None:
        raise BadSubmission("This item no longer exists or is not published.")
    return item


@require_safe
@never_cache
def progress_export(request: LearnerRequest) -> HttpResponse | StreamingHttpResponse:
    if wait := retry_after(request, "export"):
        return too_many_requests(request, wait)
    now = timezone.now()
    learner = selectors.learner_for_request(request)
    response = StreamingHttpResponse(
        progress_file.export_chunks(learner, now=now),
        content_type="application/json; charset=utf-8",
    )
    filename = f"lightmysky-progress-{now:%Y-%m-%d}.json"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@require_safe
@never_cache
@vary_on_cookie
# A new browser's sky is everyone's: the map and a forecast of days from today, all empty.
@cache_for_visitors_by(ContentVersion.for_request, daily=True)
def sky_page(request: LearnerRequest, table: bool = False) -> HttpResponse:
    learner = selectors.learner_for_request(request)
    version = ContentVersion.for_request(request)
    sky_view = sky_map.sky_for(learner=learner, now=timezone.now(), version=version)
    if table:
        return _sky_table(request, sky_view, version)
    context = {
        "sky": sky_view,
        "background": drawing.background_svg(),
        "star_words": _star_words(),
        "width": sky.WIDTH,
        "height": sky.HEIGHT,
    }
    return render(request, "practice/sky.html", context)


def _star_words() -> list[tuple[str, str, str, float]]:
    """Each word with its meaning and how its star is drawn in the legend."""
    return [(word, sky.MEANINGS[word], *drawing.LEGEND[word]) for word in sky.MEANINGS]


@require_safe
def star_words(request: LearnerRequest, markdown: bool = False) -> HttpResponse:
    """The one page that says what each of a star's five words means, and the rule."""
    context = {
        "star_words": _star_words(),
        "rule": sky.RULE,
    }
    return page_or_twin(
        request,
        context,
        html="practice/star_words.html",
        markdown="agent/star-words.md",
        twin=markdown,
    )


def _sky_table(request: LearnerRequest, sky_view: sky_map.SkyView, version: int) -> HttpResponse:
    """The sky as a table, one subject a page (the first unless `?subject=` names one)."""
    slug = request.GET.get("subject") or None
    page = sky_map.sky_table_for(sky_view=sky_view, subject_slug=slug, version=version)
    if page is None:
        if slug is None:  # no published lesson at all
            page = sky_map.SkyTable(subjects=[], subject=None, started=[], not_started=[])
        else:
            table_url = reverse("practice:sky_table")
            raise Http404(f"No subject of the sky has this name; see {table_url} for them all.")
    return render(request, "practice/sky_table.html", {"sky": sky_view, "table": page})


def _progress_page(request: LearnerRequest, *, status: int = 200, **extra) -> HttpResponse:
    learner = selectors.learner_for_request(request)
    now = timezone.now()
    context = {
        "learner": learner,
        "record": learning.learning_record(learner=learner, now=now) if learner else None,
        "summary": learning.progress_summary(learner=learner) if learner else None,
        "site_url": settings.SITE_URL,
        "import_limits": progress_file.limits_in_words(),
    } | extra
    return render(request, "practice/progress.html", context, status=status)


@require_safe
@never_cache
def progress(request: LearnerRequest) -> HttpResponse:
    notices = {
        "forgotten": "Everything stored for this browser was erased.",
        "adopted": "This browser now carries the progress from your other device.",
    }
    notice = next((text for key, text in notices.items() if key in request.GET), "")
    if request.GET.get("forgotten") == "shared":
        notice = (
            "Everything stored for this browser was erased, and with it the progress on every "
            "other device that shared it through a one-time code."
        )
    import_outcome = request.session.pop(IMPORT_OUTCOME_SESSION_KEY, "")
    return _progress_page(request, notice=notice, import_outcome=import_outcome)


@require_POST
@never_cache
@limit_posts("import")
@recover_lost_learner
def progress_import(request: LearnerRequest) -> HttpResponse:
    now = timezone.now()
    try:
        items = progress_file.read_upload(request.FILES.get("file"), now=now)
        answers = sum(len(item.reviews) for item in items)
        if wait := retry_after(request, "imported_answers", weight=answers):
            return _imports_spent(request, wait)
        result = progress_file.merge(learner=_learner_or_create(request, now), items=items)
    except progress_file.ImportUnderWay as error:
        return _progress_page(request, status=409, import_error=str(error))
    except BadSubmission as error:
        return _progress_page(request, status=400, import_error=str(error))
    # Told on the progress page, where a reload does not send the file again; the address's
    # fragment brings the learner to the result and focuses it, as the form's does to an error.
    outcome = render_to_string("practice/_import_result.txt", {"import_result": result})
    request.session[IMPORT_OUTCOME_SESSION_KEY] = outcome.strip()
    return redirect(reverse("practice:progress") + "#import-outcome")


def _imports_spent(request: LearnerRequest, wait: int) -> HttpResponse:
    """The answers this address may import in a day are spent (RATE_LIMITS["imported_answers"])."""
    hours = math.ceil(wait / 3600)
    response = _progress_page(
        request,
        status=429,
        import_error="This network has imported as many answers as it may in a day. "
        f"Try again in {hours} hour{pluralize(hours)}.",
    )
    response["Retry-After"] = str(wait)
    return response


@require_POST
@never_cache
def progress_forget(request: LearnerRequest) -> HttpResponse:
    if request.POST.get("confirm") != "yes":
        return _progress_page(
            request,
            status=400,
            forget_error="Nothing was erased: tick the box to confirm that you want to forget "
            "everything.",
        )
    shared = services.learner_forget(
        learner=selectors.learner_for_request(request), session=request.session
    )
    return redirect(
        reverse("practice:progress") + ("?forgotten=shared" if shared else "?forgotten=1")
    )


@require_http_methods(["GET", "HEAD", "POST"])
@never_cache
@recover_lost_learner
def progress_transfer(request: LearnerRequest) -> HttpResponse:
    """A one-time code and its QR code, on a page of their own (the address is the POST's, so
    the code never enters the browser's history). Asked for by its address, it leads to the
    button that makes one: a code is kept only hashed, so no page can show it again."""
    if request.method != "POST":
        return redirect(reverse("practice:progress") + "#move-title")
    learner = selectors.learner_for_request(request)
    if learner is None:
        return _progress_page(
            request, status=400, transfer_error="There is no progress in this browser to move yet."
        )
    code = services.transfer_code_create(learner=learner, now=timezone.now())
    adopt_url = f"{settings.SITE_URL}{reverse('practice:adopt')}?{urlencode({'code': code})}"
    context = {
        "transfer_code": code,
        "transfer_qr": qr_svg(adopt_url),
        "site_url": settings.SITE_URL,
    }
    return render(request, "practice/move.html", context)


def _adopt_page(
    request: LearnerRequest, code: str, *, error: str = "", code_unusable: bool = False
) -> HttpResponse:
    """The one question a scanned QR code asks: bring that progress into this browser?
    `code_unusable`: the error is the code itself (mistyped, used, replaced, expired)."""
    learner = selectors.learner_for_request(request)
    code_complete = len(code) == services.TRANSFER_CODE_LENGTH
    already_here = code_spent = False
    if code_complete and not error:  # scanned: say now if it cannot work, not after "Yes"
        holder, usable = services.transfer_code_holder(code=code, now=timezone.now())
        # A code made here, or used here already: this browser has that progress either way.
        already_here = learner is not None and holder == learner.pk
        code_spent = not usable
        if code_spent and not already_here:
            error, code_unusable = services.CODE_DOES_NOT_WORK, True
    context = {
        "adopt_code": code,
        "code_complete": code_complete,
        "adopt_error": error,
        "code_unusable": code_unusable,
        "already_here": already_here,
        "code_spent": code_spent,
        "here": learning.progress_summary(learner=learner).reviews if learner else 0,
    }
    return render(request, "practice/move.html", context, status=400 if error else 200)


@require_http_methods(["GET", "HEAD", "POST"])
@never_cache
@limit_posts("adopt")
def progress_adopt(request: LearnerRequest) -> HttpResponse:
    code = services.normalise_transfer_code(
        (request.POST if request.method == "POST" else request.GET).get("code", "")
    )
    if request.method != "POST":  # a scanned QR code lands here: ask before adopting
        # Checking the code first tells whether it works: counted like an attempt to use it.
        full = len(code) == services.TRANSFER_CODE_LENGTH
        if full and (wait := retry_after(request, "adopt")):
            return too_many_requests(request, wait)
        return _adopt_page(request, code)
    if len(code) != services.TRANSFER_CODE_LENGTH:
        error = f"A code has {services.TRANSFER_CODE_LENGTH} letters and digits, like ABCD-EFGH."
        return _adopt_page(request, code, error=error, code_unusable=True)
    try:
        learner = services.transfer_code_redeem(
            code=code, current=selectors.learner_for_request(request), now=timezone.now()
        )
    except services.TransferCodeMadeHere:  # the page says this browser has that progress
        return _adopt_page(request, code)
    except services.TransferCodeInvalid as error:
        unusable = isinstance(error, services.TransferCodeUnknown)
        return _adopt_page(request, code, error=str(error), code_unusable=unusable)
    request.session.cycle_key()
    services.learner_bind_session(session=request.session, learner=learner, now=timezone.now())
    return redirect(reverse("practice:progress") + "?adopted=1")


@require_http_methods(["GET", "HEAD", "POST"])
@never_cache
@limit_posts("answer")
@recover_lost_learner
def worksheet_answers(
    request: LearnerRequest, subject: str, public_id: str, slug: str | None = None
) -> HttpResponse:
    """Answers from a printed worksheet, typed in: graded and scheduled like on-screen ones."""
    page = page_or_redirect(request, subject, public_id, slug, "practice:worksheet_answers")
    if isinstance(page, HttpResponse):
        return page
    lesson = page.lesson
    questions = page.questions
    url = lesson.get_worksheet_answers_url()
    context = {"lesson": lesson, "rows": [(question, "", None) for question in questions]}
    if request.method != "POST":
        done = request.GET.get("done", "")
        learner = selectors.learner_for_request(request)
        if done and learner and re.fullmatch(r"[-\w]{1,40}", done):
            reviews = selectors.paper_reviews(learner=learner, lesson=lesson, batch=done)
            by_id = {question.pk: question for question in questions}
            context["feedback_list"] = [
                feedback_for(review, by_id[review.question_id], on_paper=True)
                for review in reviews
                if review.question_id in by_id
            ]
            context["right"] = sum(1 for review in reviews if review.correct)
            typed = {review.question_id for review in reviews}
            context["left_blank"] = [q.position for q in questions if q.pk not in typed]
            context["summary"] = stars.sitting_summary(
                learner=learner, reviews=reviews, now=timezone.now()
            )
        else:
            context["practice_until"] = _lesson_practice_until(learner, lesson)
        context["token"] = submissions.issue_for_worksheet(lesson_id=lesson.pk)
        # The short address and the QR code on the sheet bring its code along.
        context["typed_code"] = normalise_worksheet_code(request.GET.get("code", ""))
        return render(request, "practice/worksheet_answers.html", context)

    try:
        attempt = read_attempt(request.POST, lesson_id=lesson.pk)
        if attempt.kind != "worksheet":
            raise BadSubmission("This form is not a worksheet's answers.")
        answers = read_paper_answers(
            request.POST, questions=questions, expected_code=lesson.worksheet_code(questions)
        )
    except BadSubmission as error:
        problems = error.problems if isinstance(error, BadPaperAnswers) else {}
        context |= {
            "error": str(error),
            "problems": problems,
            "token": request.POST.get("token", ""),
            "typed_code": request.POST.get("code", "")[:20],
            "practice_until": _lesson_practice_until(
                selectors.learner_for_request(request), lesson
            ),
            "rows": [
                (q, request.POST.get(f"answer_{q.position}", "")[:12], problems.get(q.position))
                for q in questions
            ],
        }
        return render(request, "practice/worksheet_answers.html", context, status=400)
    now = timezone.now()
    learner = _learner_or_create(request, now)
    for question, grade in answers.items():
        _, created = services.question_answer(
            learner=learner,
            question=question,
            grade=grade,
            attempt=f"paper:{attempt.nonce}:{question.position}",
            duration_ms=None,
            now=now,
            preview=_is_preview(request, lesson),
        )
        recorded(request, created)
    return redirect(f"{url}?done={attempt.nonce}")


def _lesson_practice_until(learner: Learner | None, lesson: Lesson) -> datetime | None:
    """Until when an answer to some of the lesson's questions would be practice: they were
    answered within the sitting. A new round says so before its first question, the worksheet's
    answer page before the sheet is typed in and again after a mistake in it."""
    now = timezone.now()
    recent = selectors.question_answers_in_sitting(learner=learner, lesson=lesson, now=now)
    return stars.practice_until(recent, now)
