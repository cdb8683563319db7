"""The content's pages. The lesson page, the home page and the subject pages are where the
learner's progress meets the content: the only place in `lessons` that reads `practice`."""

from __future__ import annotations

from urllib.parse import urlencode

from django.conf import settings
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.shortcuts import redirect as redirect_to
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_safe
from django.views.decorators.vary import vary_on_cookie, vary_on_headers

from lessons import search as lesson_search
from lessons import services
from lessons.forms import ReportForm
from lessons.models import ContentVersion, Lesson, Subject
from lessons.selectors import (
    normalise_worksheet_code,
    page_or_redirect,
    worksheets_by_code,
)
from lightmysky.lib.http import SiteRequest
from lightmysky.lib.negotiation import (
    markdown_response,
    page_or_twin,
    vary_on_accept,
    wants_markdown,
)
from lightmysky.lib.numbers import small_int
from lightmysky.lib.pagecache import cache_for_visitors_by
from lightmysky.lib.qr import qr_svg_cached
from lightmysky.ratelimit import limit_posts
from practice import selectors
from practice.selectors import learning, stars

# A subject page lists at most this many lessons, and pages through the rest.
SUBJECT_PAGE_LESSONS = 50

# Pages every visitor without a session shares, until an editor changes the content.
cache_for_visitors = cache_for_visitors_by(ContentVersion.for_request)


@require_safe
@vary_on_cookie
@cache_for_visitors
def home(request: HttpRequest, markdown: bool = False) -> HttpResponse:
    learner = selectors.learner_for_request(request)
    now = timezone.now()
    lessons = list(Lesson.objects.for_listing())
    progress = learning.lesson_progress(learner=learner, now=now)
    recent = learning.recent_constellations(
        learner=learner, lessons=lessons, progress=progress, now=now
    )
    # Also the header's counter: the view's value spares the context processor its query.
    counter = stars.sky_counter(learner=learner, now=now) if learner else None
    due = counter.due if counter else 0
    context = {
        "learner": learner,
        "sky_counter": counter,
        "lessons": lessons,
        "cards": learning.lesson_cards(lessons, progress),
        "recent": recent,
        "next_step": learning.next_step(
            learner=learner,
            due=due,
            progress=progress,
            lessons={lesson.pk: lesson for lesson in lessons},
        ),
    }
    return page_or_twin(
        request, context, html="lessons/home.html", markdown="agent/home.md", twin=markdown
    )


@require_safe
@vary_on_cookie
@cache_for_visitors
def subject(request: HttpRequest, subject: str, markdown: bool = False) -> HttpResponse:
    subject_obj = get_object_or_404(Subject, slug=subject)
    learner = selectors.learner_for_request(request)
    pages = Paginator(
        Lesson.objects.for_listing().filter(subject=subject_obj), SUBJECT_PAGE_LESSONS
    )
    page = pages.get_page(small_int(request.GET.get("page")) or 1)
    lessons = list(page.object_list)
    progress = (
        learning.lesson_progress(
            learner=learner, now=timezone.now(), lesson_id__in=[lesson.pk for lesson in lessons]
        )
        if learner and lessons
        else {}
    )
    context = {
        "subject": subject_obj,
        "learner": learner,
        "lessons": lessons,
        "page": page,
        "cards": learning.lesson_cards(lessons, progress),
    }
    return page_or_twin(
        request, context, html="lessons/subject.html", markdown="agent/subject.md", twin=markdown
    )


@require_safe
@vary_on_cookie
@vary_on_headers("HX-Request")
def search(request: SiteRequest, markdown: bool = False) -> HttpResponse:
    """Lessons found by words, with the learner's state in each; htmx asks for the results
    alone as the learner types."""
    query = lesson_search.typed_query(request.GET.get("q", ""))
    results = lesson_search.search(query, page=small_int(request.GET.get("page")) or 1)
    learner = selectors.learner_for_request(request)
    found = [hit.lesson.pk for hit in results.hits]
    progress = (
        learning.lesson_progress(learner=learner, now=timezone.now(), lesson_id__in=found)
        if found
        else {}
    )
    context = {
        "results": results,
        "learner": learner,
        "hits": [(hit, progress.get(hit.lesson.pk)) for hit in results.hits],
        "search_query": query,
    }
    if markdown or wants_markdown(request):
        return markdown_response(request, "agent/search.md", context)
    template = "lessons/search.html"
    if request.htmx and not request.htmx.history_restore_request:
        template += "#search-main"
    return vary_on_accept(render(request, template, context))


@require_safe
@vary_on_cookie
@cache_for_visitors
def lesson(
    request: HttpRequest,
    subject: str,
    public_id: str,
    slug: str | None = None,
    markdown: bool = False,
) -> HttpResponse:
    url_name = "lessons:lesson_markdown" if markdown else "lessons:lesson"
    page = page_or_redirect(request, subject, public_id, slug, url_name)
    if isinstance(page, HttpResponse):
        return page
    if markdown or wants_markdown(request):
        return markdown_response(request, "agent/lesson.md", page.context())
    context = page.context() | stars.lesson_stars(
        learner=selectors.learner_for_request(request), page=page, now=timezone.now()
    )
    return vary_on_accept(render(request, "lessons/lesson.html", context))


@require_safe
def worksheet(
    request: HttpRequest, subject: str, public_id: str, slug: str | None = None
) -> HttpResponse:
    page = page_or_redirect(request, subject, public_id, slug, "lessons:worksheet")
    if isinstance(page, HttpResponse):
        return page
    lesson, questions = page.lesson, page.questions
    code = lesson.worksheet_code(questions)
    # The printed sheet names where to type its answers in: an address short enough to copy
    # from paper (the code finds the lesson), and the same address as a QR code.
    type_in_url = settings.SITE_URL + reverse("lessons:worksheet_code", args=[code])
    short_address = type_in_url.split("://", 1)[-1]
    several = [question for question in questions if len(question.correct_letters) > 1]
    context = {
        "lesson": lesson,
        "questions": questions,
        "worksheet_code": code,
        "short_address": short_address,
        "type_in_qr": qr_svg_cached(type_in_url, title=f"QR code of {short_address}"),
        "some_take_several": bool(several),
        "all_take_several": len(several) == len(questions),
    }
    return render(request, "lessons/worksheet.html", context)


@require_safe
def worksheet_by_code(request: HttpRequest, code: str = "") -> HttpResponse:
    """The short address printed on a worksheet: its code leads to the lesson's type-in form."""
    typed = code or request.GET.get("code", "")
    code = normalise_worksheet_code(typed)
    if not code:
        return render(request, "lessons/worksheet_code.html", {"typed_code": ""})
    found = worksheets_by_code(ContentVersion.for_request(request)).get(code, [])
    if len(found) == 1:
        return redirect_to(f"{found[0].answers_url}?{urlencode({'code': code})}")
    context = {"typed_code": typed[:20], "code": code, "found": found}
    return render(request, "lessons/worksheet_code.html", context, status=200 if found else 404)


@require_http_methods(["GET", "HEAD", "POST"])
@limit_posts("report")
def report(
    request: HttpRequest, subject: str, public_id: str, slug: str | None = None
) -> HttpResponse:
    page = page_or_redirect(request, subject, public_id, slug, "lessons:report")
    if isinstance(page, HttpResponse):
        return page
    lesson, questions = page.lesson, page.questions
    if request.method != "POST":
        initial = {"question": request.GET.get("question")}
        if said := _answer_in_words(questions, request.GET):
            initial["message"] = said
        form = ReportForm(questions=questions, initial=initial)
        sent = "sent" in request.GET
        return render(
            request, "lessons/report.html", {"lesson": lesson, "form": form, "sent": sent}
        )

    form = ReportForm(request.POST, questions=questions)
    if not form.is_valid():
        context = {"lesson": lesson, "form": form}
        return render(request, "lessons/report.html", context, status=400)
    services.report_create(
        lesson=lesson,
        kind=form.cleaned_data["kind"],
        message=form.cleaned_data["message"],
        question_position=form.cleaned_data["question"],
    )
    return redirect_to(lesson.get_report_url() + "?sent=1")


def _answer_in_words(questions, query) -> str:
    """The start of a report sent from an answer's feedback: what the learner chose, in the
    choices' words (the letters they saw were shuffled). Empty for anything else."""
    position = small_int(query.get("question"))
    question = next((q for q in questions if q.position == position), None)
    chosen = set(query.get("chose", "").split(","))
    texts = [c["text"] for c in question.choices if c.get("id") in chosen] if question else []
    if not texts:
        return ""
    return "I answered " + " and ".join(f"“{text}”" for text in texts) + ". "
