from __future__ import annotations

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, HttpResponsePermanentRedirect
from django.shortcuts import get_object_or_404, render
from django.shortcuts import redirect as redirect_to
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_safe
from django.views.decorators.vary import vary_on_cookie

from lessons import services
from lessons.forms import ReportForm
from lessons.models import Lesson, Subject
from lessons.structured_data import learning_resource
from lightmysky.lib.negotiation import markdown_response, vary_on_accept, wants_markdown
from lightmysky.lib.ratelimit import limit_posts
from practice import selectors


def visible_lesson_or_404(request: HttpRequest, public_id: str) -> Lesson:
    """The lesson with this id if this visitor may see it: drafts only for staff."""
    lesson = get_object_or_404(Lesson.objects.for_page(), public_id=public_id)
    if not lesson.is_published and not request.user.is_staff:
        raise Http404("No lesson has this address.")
    return lesson


def redirect_if_not_canonical(
    request: HttpRequest, lesson: Lesson, subject: str, slug: str | None, suffix: str = ""
) -> HttpResponse | None:
    if subject == lesson.subject.slug and slug == lesson.slug:
        return None
    target = lesson.get_absolute_url() + suffix
    if query := request.META.get("QUERY_STRING"):
        target += "?" + query
    return HttpResponsePermanentRedirect(target)


@require_safe
@vary_on_cookie
def home(request: HttpRequest, markdown: bool = False) -> HttpResponse:
    context = {"lessons": list(Lesson.objects.for_listing())}
    if markdown or wants_markdown(request):
        return markdown_response(request, "agent/home.md", context)
    return vary_on_accept(render(request, "lessons/home.html", context))


@require_safe
@vary_on_cookie
def subject(request: HttpRequest, subject: str, markdown: bool = False) -> HttpResponse:
    subject_obj = get_object_or_404(Subject, slug=subject)
    context = {
        "subject": subject_obj,
        "lessons": list(Lesson.objects.for_listing().filter(subject=subject_obj)),
    }
    if markdown or wants_markdown(request):
        return markdown_response(request, "agent/subject.md", context)
    return vary_on_accept(render(request, "lessons/subject.html", context))


@require_safe
@vary_on_cookie
def lesson(
    request: HttpRequest,
    subject: str,
    public_id: str,
    slug: str | None = None,
    markdown: bool = False,
) -> HttpResponse:
    lesson = visible_lesson_or_404(request, public_id)
    suffix = ".md" if markdown else ""
    if redirect := redirect_if_not_canonical(request, lesson, subject, slug, suffix):
        return redirect
    context = lesson_context(lesson)
    if markdown or wants_markdown(request):
        return markdown_response(request, "agent/lesson.md", context)
    context["constellation"] = selectors.constellation_for(
        learner=selectors.learner_for_request(request), lesson=lesson, now=timezone.now()
    )
    context["structured_data"] = learning_resource(lesson, context["questions"])
    return vary_on_accept(render(request, "lessons/lesson.html", context))


def lesson_context(lesson: Lesson) -> dict:
    """What both the lesson page and its Markdown twin show: its neighbours and questions."""
    neighbours = list(Lesson.objects.neighbours_of(lesson))
    return {
        "lesson": lesson,
        "page_url": settings.SITE_URL + lesson.get_absolute_url(),
        "needs_first": [n for n in neighbours if n.is_needed_first],
        "connections": [n for n in neighbours if n.is_connection],
        "opens_up": [n for n in neighbours if n.is_opened_up],
        "questions": list(lesson.questions.all()),
    }


@require_safe
def worksheet(
    request: HttpRequest, subject: str, public_id: str, slug: str | None = None
) -> HttpResponse:
    lesson = visible_lesson_or_404(request, public_id)
    if redirect := redirect_if_not_canonical(request, lesson, subject, slug, "/worksheet"):
        return redirect
    questions = list(lesson.questions.all())
    context = {
        "lesson": lesson,
        "questions": questions,
        "worksheet_code": lesson.worksheet_code(questions),
    }
    return render(request, "lessons/worksheet.html", context)


@require_http_methods(["GET", "HEAD", "POST"])
@limit_posts("report")
def report(
    request: HttpRequest, subject: str, public_id: str, slug: str | None = None
) -> HttpResponse:
    lesson = visible_lesson_or_404(request, public_id)
    if request.method != "POST" and (
        redirect := redirect_if_not_canonical(request, lesson, subject, slug, "/report")
    ):
        return redirect
    questions = list(lesson.questions.all())
    if request.method != "POST":
        form = ReportForm(questions=questions, initial={"question": request.GET.get("question")})
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
    return redirect_to(lesson.get_absolute_url() + "/report?sent=1")
