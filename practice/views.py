from __future__ import annotations

import re
from datetime import datetime, timedelta
from functools import wraps

from django.conf import settings
from django.db import IntegrityError
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST, require_safe
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import push_url

from lessons.models import Flashcard, Lesson, Question
from lessons.selectors import LessonPage, normalise_worksheet_code
from lessons.views import page_or_redirect
from lightmysky.lib.numbers import small_int
from lightmysky.lib.qr import qr_svg
from lightmysky.lib.ratelimit import limit_posts, retry_after, too_many_requests
from lightmysky.lib.versioned import content_version
from practice import attempts, progress_file, rounds, scheduling, selectors, services, sky
from practice.attempts import BadSubmission
from practice.forms import (
    FlashcardRating,
    QuestionAnswer,
    read_attempt,
    read_flashcard_rating,
    read_paper_answers,
    read_question_answer,
)
from practice.models import (
    LEARNER_PK_SESSION_KEY,
    LEARNER_SESSION_KEY,
    Learner,
    LearnerGone,
    Review,
    new_round_key,
)

ROUND_TEMPLATE = "practice/round.html"
REVIEW_BATCH_SESSION_KEY = "review_batch"
REVIEW_BATCH_LIFETIME = timedelta(hours=1)


def recover_lost_learner(view):
    """If the session names a learner that is gone, start afresh once instead of failing.

    A learner pruned or erased on another device leaves this browser's session behind: the
    request is served again for a new learner. A learner erased by "Forget everything" in this
    same browser, while this request was on its way, ends its session too: the request is
    refused (409) and nothing is recorded for anyone.
    """

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except (LearnerGone, IntegrityError):
            pk = request.session.get(LEARNER_PK_SESSION_KEY)
            if pk is None or Learner.objects.filter(pk=pk).exists():
                raise
            if not request.session.exists(request.session.session_key):
                context = {
                    "message": "Everything stored for this browser was just erased, in "
                    "another tab or window.",
                    "back_url": "/progress",
                    "target": "main",
                }
                return render(request, "practice/bad_submission.html", context, status=409)
            services.forget_learner_in_session(request.session)
            request.__dict__.pop("learner", None)
            return view(request, *args, **kwargs)

    return wrapped


def _learner_or_create(request: HttpRequest, now) -> Learner:
    learner = services.learner_get_or_create(
        session=request.session,
        browser_secret=request.COOKIES.get(settings.CSRF_COOKIE_NAME),
        now=now,
    )
    request.learner = learner  # the header's sky counter reads it
    return learner


def _page_or_partial(request: HttpRequest, template: str, partial: str) -> str:
    """The fragment for htmx swaps; the whole page otherwise, also when htmx restores history."""
    if request.htmx and not request.htmx.history_restore_request:
        return f"{template}#{partial}"
    return template


def feedback_for(
    review: Review, question: Question, progress: rounds.RoundProgress | None = None
) -> dict:
    """What the learner sees after answering: each choice marked, with the explanations."""
    picked = set(review.answer.split(",")) if review.answer else set()
    choices = [
        choice | {"picked": choice["letter"] in picked} for choice in question.labelled_choices
    ]
    comes_back = bool(
        progress
        and not review.correct
        and review.round_step is not None
        and review.round_step < len(progress.questions)
    )
    return {"review": review, "question": question, "choices": choices, "comes_back": comes_back}


def bad_submission(
    request: HttpRequest, message: str, *, back_url: str, target: str
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
    request: HttpRequest, subject: str, public_id: str, slug: str | None = None
) -> HttpResponse:
    page = page_or_redirect(request, subject, public_id, slug, "/practice")
    if isinstance(page, HttpResponse):
        return page
    lesson, questions = page.lesson, page.questions
    if request.method == "POST":
        return _practice_answer(request, page)

    learner = selectors.learner_for_request(request)
    now = timezone.now()
    memories = None  # read once, for a new round's order and the constellation alike
    progress = selectors.round_progress(learner=learner, lesson=lesson, questions=questions)
    context: dict = {"lesson": lesson, "progress": progress}
    answered = small_int(request.GET.get("answered"))
    if answered and 0 < answered <= progress.step:
        review = progress.reviews[answered - 1]
        context["feedback"] = feedback_for(review, _question_of(review, questions), progress)
    elif progress.finished and "summary" in request.GET:
        pass  # the round's summary, straight after its last answer
    elif request.GET.get("new") or progress.round is None or progress.finished:
        memories = selectors.lesson_memories(learner=learner, lesson=lesson)
        progress = rounds.RoundProgress(
            questions=selectors.new_round_questions(questions=questions, memories=memories, now=now)
        )
        context |= _question_form(lesson, progress, new_round_key())
        context["progress"] = progress
    else:
        context |= _question_form(lesson, progress, progress.round.key)
    if not request.htmx:
        context["constellation"] = selectors.constellation_for(
            learner=learner, lesson=lesson, items=page.items, now=now, memories=memories
        )
    return render(request, _page_or_partial(request, ROUND_TEMPLATE, "practice-card"), context)


def _question_of(review: Review, questions: list[Question]) -> Question:
    return next(question for question in questions if question.pk == review.question_id)


def _question_form(lesson: Lesson, progress: rounds.RoundProgress, round_key: str) -> dict:
    question = progress.current
    if question is None:
        return {}
    token = attempts.issue_for_round(
        lesson_id=lesson.pk, question_id=question.pk, round_key=round_key, step=progress.step
    )
    return {"question": question, "token": token}


def _practice_answer(request: HttpRequest, page: LessonPage) -> HttpResponse:
    lesson, questions = page.lesson, page.questions
    practice_url = lesson.get_absolute_url() + "/practice"
    try:
        attempt = read_attempt(request.POST, lesson_id=lesson.pk)
        question = next((q for q in questions if q.pk == attempt.item_id), None)
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
        review, progress = services.round_answer(
            learner=_learner_or_create(request, now),
            lesson=lesson,
            questions=questions,
            answer=answer,
            now=now,
        )
    except BadSubmission as error:
        return bad_submission(request, str(error), back_url=practice_url, target="practice-card")
    if not request.htmx:
        return redirect(f"{practice_url}?answered={review.round_step + 1}#feedback")
    context = {
        "lesson": lesson,
        "progress": progress,
        "feedback": feedback_for(review, question, progress),
        "constellation": selectors.constellation_for(
            learner=request.learner, lesson=lesson, items=page.items, now=now
        ),
        "oob_updates": True,
    }
    response = render(request, f"{ROUND_TEMPLATE}#practice-card", context)
    return push_url(response, f"{practice_url}?answered={review.round_step + 1}")


@vary_on_headers("HX-Request")
@require_http_methods(["GET", "HEAD", "POST"])
@never_cache
@limit_posts("answer")
@recover_lost_learner
def flashcards(
    request: HttpRequest, subject: str, public_id: str, slug: str | None = None
) -> HttpResponse:
    page = page_or_redirect(request, subject, public_id, slug, "/flashcards")
    if isinstance(page, HttpResponse):
        return page
    lesson = page.lesson
    cards = list(lesson.flashcards.all())
    url = lesson.get_absolute_url() + "/flashcards"
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
        services.review_answer(
            learner=_learner_or_create(request, now), attempt=attempt, answer=rating, now=now
        )
        position = cards.index(card) + 1
        if not request.htmx:
            return redirect(f"{url}?card={position + 1}")
        response = render(
            request,
            "practice/flashcards.html#flashcard-card",
            _flashcard_context(lesson, cards, position),
        )
        return push_url(response, f"{url}?card={position + 1}")
    position = max((small_int(request.GET.get("card")) or 1) - 1, 0)
    context = _flashcard_context(lesson, cards, position)
    return render(
        request, _page_or_partial(request, "practice/flashcards.html", "flashcard-card"), context
    )


def _flashcard_context(lesson: Lesson, cards: list[Flashcard], position: int) -> dict:
    context: dict = {"lesson": lesson, "cards": cards, "position": position, "number": position + 1}
    if position < len(cards):
        card = cards[position]
        context["card"] = card
        context["token"] = attempts.issue_once(
            lesson_id=lesson.pk, kind="flashcard", item_id=card.pk
        )
    return context


@vary_on_headers("HX-Request")
@require_http_methods(["GET", "HEAD", "POST"])
@never_cache
@limit_posts("answer")
@recover_lost_learner
def review(request: HttpRequest) -> HttpResponse:
    now = timezone.now()
    learner = selectors.learner_for_request(request)
    batch = _review_batch(request, now)
    if request.method == "POST":
        if "more" in request.POST:
            request.session.pop(REVIEW_BATCH_SESSION_KEY, None)
            return redirect("practice:review")
        return _review_answer(request, now)

    batch_done = batch["done"] if learner else 0
    context: dict = {"batch_size": selectors.REVIEW_BATCH_SIZE, "batch_done": batch_done}
    reviewed = small_int(request.GET.get("reviewed"))
    if learner is not None and reviewed:
        done = (
            Review.objects.filter(learner=learner, pk=reviewed)
            .select_related("question", "flashcard", "lesson__subject")
            .first()
        )
        if done is not None and done.question_id:
            context["feedback"] = feedback_for(done, done.question)
    if "feedback" not in context:
        due = selectors.due_items(learner=learner, now=now) if learner else []
        context["due_count"] = len(due)
        if due and batch_done < selectors.REVIEW_BATCH_SIZE:
            context |= _review_item_form(due[0].memory)
        elif learner and (retry := _first_still_missed(learner, batch["missed"])):
            context |= _review_item_form(retry, practice=True)
        elif not due:
            context["next_due"] = (
                selectors.next_due_at(learner=learner, now=now) if learner else None
            )
            context["has_progress"] = learner is not None
    template = _page_or_partial(request, "practice/review.html", "review-card")
    return render(request, template, context)


def _review_batch(request: HttpRequest, now) -> dict:
    """This sitting's set: how many reviews are done, since when, and what was missed (to ask
    once more at the end). A set starts afresh after an hour away."""
    batch = request.session.get(REVIEW_BATCH_SESSION_KEY)
    fresh = {"done": 0, "since": now.isoformat(), "missed": []}
    if not isinstance(batch, dict):
        return fresh
    try:
        since = datetime.fromisoformat(batch["since"])
        done, missed = int(batch.get("done", 0)), list(batch.get("missed", []))
    except (KeyError, TypeError, ValueError):
        return fresh
    if now - since >= REVIEW_BATCH_LIFETIME:
        return fresh
    return {"done": done, "since": batch["since"], "missed": missed}


def _first_still_missed(learner: Learner, missed: list):
    """The first item missed in this set and not yet asked again (to ask at the set's end)."""
    for kind, item_id in missed:
        memory = selectors.memory_of_item(learner=learner, kind=kind, item_id=item_id)
        if memory is not None:
            return memory
    return None


def _review_item_form(memory, *, practice: bool = False) -> dict:
    token = attempts.issue_once(
        lesson_id=memory.lesson_id, kind=str(memory.kind), item_id=memory.item.pk, practice=practice
    )
    return {
        "item": memory,
        "question": memory.question,
        "card": memory.flashcard,
        "token": token,
        "practice": practice,
    }


def _review_answer(request: HttpRequest, now) -> HttpResponse:
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
        return bad_submission(request, str(error), back_url="/review", target="review-card")

    review, created = services.review_answer(
        learner=_learner_or_create(request, now), attempt=attempt, answer=answer, now=now
    )
    batch, item = _review_batch(request, now), [attempt.kind, attempt.item_id]
    if attempt.practice:
        batch["missed"] = [missed for missed in batch["missed"] if missed != item]
    elif created:
        batch["done"] += 1
        if review.rating == scheduling.AGAIN:
            batch["missed"].append(item)
    if attempt.practice or created:
        request.session[REVIEW_BATCH_SESSION_KEY] = batch
    target = f"/review?reviewed={review.pk}#feedback" if review.question_id else "/review"
    if not request.htmx:
        return redirect(target)
    if review.question_id:
        context = {"feedback": feedback_for(review, question), "oob_updates": True}
        response = render(request, "practice/review.html#review-card", context)
        return push_url(response, f"/review?reviewed={review.pk}")
    return redirect(target)


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
def progress_export(request: HttpRequest) -> HttpResponse | StreamingHttpResponse:
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
    response["Cache-Control"] = "no-store"
    return response


@require_safe
@never_cache
def sky_page(request: HttpRequest, table: bool = False) -> HttpResponse:
    learner = selectors.learner_for_request(request)
    context = {
        "sky": selectors.sky_for(
            learner=learner, now=timezone.now(), version=content_version(request)
        ),
        "background": sky.background_stars(),
        "width": sky.WIDTH,
        "height": sky.HEIGHT,
    }
    template = "practice/sky_table.html" if table else "practice/sky.html"
    return render(request, template, context)


def _progress_page(request: HttpRequest, *, status: int = 200, **extra) -> HttpResponse:
    learner = selectors.learner_for_request(request)
    context = {
        "learner": learner,
        "summary": selectors.progress_summary(learner=learner) if learner else None,
        "site_url": settings.SITE_URL,
        "import_limits": progress_file.limits_in_words(),
    } | extra
    return render(request, "practice/progress.html", context, status=status)


@require_safe
@never_cache
def progress(request: HttpRequest) -> HttpResponse:
    notices = {
        "forgotten": "Everything stored for this browser was erased.",
        "adopted": "This browser now carries the progress from your other device.",
    }
    notice = next((text for key, text in notices.items() if key in request.GET), "")
    return _progress_page(request, notice=notice)


@require_POST
@limit_posts("import")
@recover_lost_learner
@never_cache
def progress_import(request: HttpRequest) -> HttpResponse:
    now = timezone.now()
    try:
        items = progress_file.read_upload(request.FILES.get("file"), now=now)
        result = progress_file.merge(learner=_learner_or_create(request, now), items=items)
    except BadSubmission as error:
        return _progress_page(request, status=400, import_error=str(error))
    return _progress_page(request, import_result=result)


@require_POST
@never_cache
def progress_forget(request: HttpRequest) -> HttpResponse:
    if request.POST.get("confirm") != "yes":
        return _progress_page(
            request,
            status=400,
            forget_error="Nothing was erased: tick the box to confirm that you want to forget "
            "everything.",
        )
    services.learner_forget(learner=selectors.learner_for_request(request), session=request.session)
    return redirect("/progress?forgotten=1")


@require_POST
@recover_lost_learner
@never_cache
def progress_transfer(request: HttpRequest) -> HttpResponse:
    learner = selectors.learner_for_request(request)
    if learner is None:
        return _progress_page(
            request, status=400, transfer_error="There is no progress in this browser to move yet."
        )
    code = services.transfer_code_create(learner=learner, now=timezone.now())
    adopt_url = f"{settings.SITE_URL}/progress/adopt?code={code}"
    return _progress_page(request, transfer_code=code, transfer_qr=qr_svg(adopt_url))


@require_http_methods(["GET", "HEAD", "POST"])
@limit_posts("adopt")
@never_cache
def progress_adopt(request: HttpRequest) -> HttpResponse:
    code = services.normalise_transfer_code(
        (request.POST if request.method == "POST" else request.GET).get("code", "")
    )
    if request.method != "POST":  # a scanned QR code lands here: ask before adopting
        return _progress_page(request, adopt_code=code)
    if len(code) != services.TRANSFER_CODE_LENGTH:
        return _progress_page(
            request,
            status=400,
            adopt_code=code,
            adopt_error=f"A code has {services.TRANSFER_CODE_LENGTH} letters and digits, "
            "like ABCD-EFGH.",
        )
    try:
        learner = services.transfer_code_redeem(
            code=code, current=selectors.learner_for_request(request), now=timezone.now()
        )
    except services.TransferCodeInvalid as error:
        return _progress_page(request, status=400, adopt_code=code, adopt_error=str(error))
    request.session.cycle_key()
    services.learner_bind_session(session=request.session, learner=learner, now=timezone.now())
    return redirect("/progress?adopted=1")


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
@limit_posts("answer")
@recover_lost_learner
def worksheet_answers(
    request: HttpRequest, subject: str, public_id: str, slug: str | None = None
) -> HttpResponse:
    """Answers from a printed worksheet, typed in: graded and scheduled like on-screen ones."""
    suffix = "/worksheet/answers"
    page = page_or_redirect(request, subject, public_id, slug, suffix)
    if isinstance(page, HttpResponse):
        return page
    lesson = page.lesson
    questions = page.questions
    url = lesson.get_absolute_url() + suffix
    context = {"lesson": lesson, "rows": [(question, "") for question in questions]}
    if request.method != "POST":
        done = request.GET.get("done", "")
        learner = selectors.learner_for_request(request)
        if done and learner and re.fullmatch(r"[-\w]{1,40}", done):
            reviews = selectors.paper_reviews(learner=learner, lesson=lesson, batch=done)
            by_id = {question.pk: question for question in questions}
            context["feedback_list"] = [
                feedback_for(review, by_id[review.question_id])
                for review in reviews
                if review.question_id in by_id
            ]
            context["right"] = sum(1 for review in reviews if review.correct)
        context["token"] = attempts.issue_for_worksheet(lesson_id=lesson.pk)
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
        context |= {
            "error": str(error),
            "token": request.POST.get("token", ""),
            "typed_code": request.POST.get("code", "")[:20],
            "rows": [(q, request.POST.get(f"answer_{q.position}", "")[:12]) for q in questions],
        }
        return render(request, "practice/worksheet_answers.html", context, status=400)
    now = timezone.now()
    learner = _learner_or_create(request, now)
    for question, grade in answers.items():
        services.question_answer(
            learner=learner,
            question=question,
            grade=grade,
            attempt=f"paper:{attempt.nonce}:{question.position}",
            duration_ms=None,
            now=now,
        )
    return redirect(f"{url}?done={attempt.nonce}")
