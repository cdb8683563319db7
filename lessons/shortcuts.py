"""A lesson as a view finds it from its address: its page data, a 404, or the canonical address."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse, HttpResponsePermanentRedirect

from lessons.models import ContentVersion, Lesson
from lessons.selectors import LessonPage, lesson_page


def visible_page_or_404(request: HttpRequest, public_id: str) -> LessonPage:
    """The lesson's cached page data if this visitor may see it: drafts only for staff."""
    page = lesson_page(public_id, ContentVersion.for_request(request))
    if page is None or (not page.lesson.is_published and not request.user.is_staff):
        raise Http404("No lesson has this address.")
    return page


def page_or_redirect(
    request: HttpRequest,
    subject: str,
    public_id: str,
    slug: str | None,
    url_name: str = "lessons:lesson",
) -> LessonPage | HttpResponse:
    """A lesson view's page data, or for a read at a wrong address the 301 to the right one:
    the address named `url_name` of the lesson."""
    page = visible_page_or_404(request, public_id)
    if request.method != "POST" and (
        redirect := redirect_if_not_canonical(request, page.lesson, subject, slug, url_name)
    ):
        return redirect
    return page


def redirect_if_not_canonical(
    request: HttpRequest,
    lesson: Lesson,
    subject: str,
    slug: str | None,
    url_name: str = "lessons:lesson",
) -> HttpResponse | None:
    if subject == lesson.subject.slug and slug == lesson.slug:
        return None
    target = lesson.get_url(url_name)
    if query := request.META.get("QUERY_STRING"):
        target += "?" + query
    return HttpResponsePermanentRedirect(target)
