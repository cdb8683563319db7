"""Site-wide pages outside the two apps: robots.txt, the favicon, the agent files (llms.txt,
llms-full.txt, the AI catalogue) and the error pages."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import admin
from django.contrib.admin.exceptions import DisallowedModelAdminLookup
from django.core.exceptions import BadRequest, RequestDataTooBig, TooManyFieldsSent
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponsePermanentRedirect,
    JsonResponse,
)
from django.shortcuts import render
from django.template.loader import render_to_string
from django.templatetags.static import static
from django.urls import Resolver404, resolve, reverse
from django.utils.html import format_html
from django.views import defaults
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe

from lessons.models import ContentVersion, Lesson
from lessons.selectors import lesson_page
from lightmysky.api import error_response
from lightmysky.lib.http import SiteRequest
from lightmysky.lib.negotiation import MARKDOWN_TYPE, markdown_response
from lightmysky.middleware import ADMIN_PREFIX, API_PREFIX


@require_safe
@cache_control(max_age=86400, public=True)
def robots_txt(request: HttpRequest) -> HttpResponse:
    # Only the admin is kept out. /review and /progress show a crawler (which has no session)
    # what they show any new browser, and blocking them would fail Lighthouse's SEO check on
    # pages the performance budget asks 100 of; they are not in the sitemap.
    lines = [
        "User-agent: *",
        f"Disallow: {reverse('admin:index')}",
        "",
        f"Sitemap: {settings.SITE_URL}{reverse('sitemap')}",
        "",
    ]
    return HttpResponse("\n".join(lines), content_type="text/plain; charset=utf-8")


@require_safe
def favicon(request: HttpRequest) -> HttpResponse:
    return HttpResponsePermanentRedirect(static("favicon.svg"))


def _markdown_file(template: str):
    @require_safe
    def view(request: HttpRequest) -> HttpResponse:
        return markdown_response(request, template, {})

    return view


agent_instructions = _markdown_file("agent/agent-instructions.md")
auth_md = _markdown_file("agent/auth.md")
pricing_md = _markdown_file("agent/pricing.md")


@require_safe
def llms_txt(request: HttpRequest) -> HttpResponse:
    context = {"lessons": list(Lesson.objects.for_listing())}
    return markdown_response(request, "agent/llms.txt", context)


@require_safe
def llms_full_txt(request: HttpRequest) -> HttpResponse:
    """Every published lesson's twin, one after another."""
    version = ContentVersion.for_request(request)
    pages = (lesson_page(lesson.public_id, version) for lesson in Lesson.objects.for_listing())
    twins = [
        render_to_string("agent/lesson.md", page.context(), request=request)
        for page in pages
        if page is not None
    ]
    separator = "\n\n---\n\n"
    return HttpResponse(separator.join(twins), content_type=MARKDOWN_TYPE)


@require_safe
def ai_catalog(request: HttpRequest) -> JsonResponse:
    site = settings.SITE_URL
    named_files = [
        ("llms_txt", "text/markdown", "The catalog in the llms.txt format: every lesson"),
        ("llms_full_txt", "text/markdown", "Every published lesson's Markdown twin"),
        ("agent_instructions", "text/markdown", "When to use the site; the call per job"),
        ("openapi", "application/json", "OpenAPI 3.1 description of the JSON API"),
        ("auth_md", "text/markdown", "Authentication: none; what the cookie is for"),
        ("pricing_md", "text/markdown", "Pricing: free, and what that means"),
        ("sitemap", "application/xml", "Every published page, for search engines"),
        (
            "lessons:home_markdown",
            "text/markdown",
            "The home page as Markdown: subjects and lessons",
        ),
        ("lessons:search_markdown", "text/markdown", "Search results as Markdown: add ?q=words"),
        ("practice:words_markdown", "text/markdown", "The five words for a star's state"),
    ]
    files = [
        (site + reverse(name), media_type, description)
        for name, media_type, description in named_files
    ]
    lessons = list(Lesson.objects.for_listing())
    for subject in dict.fromkeys(lesson.subject for lesson in lessons):
        files.append(
            (site + subject.get_markdown_url(), "text/markdown", f"{subject.name}: its lessons")
        )
    for lesson in lessons:
        files.append((site + lesson.get_markdown_url(), "text/markdown", f"Lesson: {lesson.title}"))
    document = {
        "name": settings.SITE_NAME,
        "description": "Free self-study lessons with explained practice questions. No account.",
        "url": site + reverse("lessons:home"),
        "files": [
            {"url": url, "media_type": media_type, "description": description}
            for url, media_type, description in files
        ],
    }
    return JsonResponse(document, json_dumps_params={"indent": 2, "ensure_ascii": False})


def bad_request(request: SiteRequest, exception: Exception) -> HttpResponse:
    """A request Django could not read, or a form or address the site's pages never send,
    told in the words of the part of the site it came to."""
    if request.path.startswith(API_PREFIX):
        return error_response("The request is not valid.", 400)
    if request.path.startswith(ADMIN_PREFIX):
        return _admin_bad_request(request, exception)
    context: dict[str, Any] = {
        "why": _too_much(exception) or "Your browser sent a request this site cannot read."
    }
    # (a request refused before django-htmx's middleware has no .htmx)
    if getattr(request, "htmx", False):  # in place of the part of the page it was to replace
        context |= {"target": request.htmx.target, "back_url": request.path}
        return render(request, "400.html#refused", context, status=400)
    return render(request, "400.html", context, status=400)


def _admin_bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if isinstance(exception, RequestDataTooBig):
        # Raised where the CSRF check first reads the form, before any admin view. The admin's
        # Markdown preview swaps this paragraph in where the preview goes.
        message = f"Cannot do this: {_too_much(exception)}"
        return HttpResponse(format_html('<p class="errornote">{}</p>', message), status=400)
    if not in_admin(request):
        return render(request, "400.html", status=400)
    # An address or a form the admin's pages never make (lightmysky.admin), told why.
    if isinstance(exception, (BadRequest, DisallowedModelAdminLookup)):
        message = str(exception)
    else:
        message = _too_much(exception) or "The admin cannot read this request."
    context = admin.site.each_context(request) | {"title": "Cannot do this", "message": message}
    return render(request, "admin/400.html", context, status=400)


def _too_much(exception: Exception) -> str:
    """What a form sent over the site's limits, if that is why it was refused."""
    if isinstance(exception, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE // 1024
        return f"the form sent more than the {limit} KB of text a form may send."
    if isinstance(exception, TooManyFieldsSent):
        fields = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
        return f"the form sent more than the {fields:,} fields a form may send."
    return ""


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    """An editor refused in the admin is told so in the admin, with its menu, not on a page of
    the learners' site."""
    if in_admin(request):
        context = admin.site.each_context(request) | {"title": "Not allowed"}
        return render(request, "admin/403.html", context, status=403)
    return defaults.permission_denied(request, exception)


def in_admin(request: HttpRequest) -> bool:
    """A signed-in editor on an admin page, who is answered on one."""
    return request.path.startswith(reverse("admin:index")) and request.user.is_staff


def server_error(request: HttpRequest) -> HttpResponse:
    if request.path.startswith(API_PREFIX):
        return error_response("Something went wrong on our side; please try again later.", 500)
    return defaults.server_error(request)


def routed(path: str) -> bool:
    try:
        resolve(path)
    except Resolver404:
        return False
    return True


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """The site's 404 page; an address with a stray trailing slash goes to the one without.

    Only when no view took the address: a view that raised the 404 itself (the admin's change
    page of a missing object) is answered here, or the admin would add the slash back forever.
    """
    path = request.path
    if len(path) > 1 and path.endswith("/") and not path.startswith("//") and not routed(path):
        target = path.rstrip("/")
        if routed(target):
            if query := request.META.get("QUERY_STRING"):
                target += "?" + query
            return HttpResponsePermanentRedirect(target)
    if path.startswith(API_PREFIX):
        return error_response(
            f"The API has nothing at this address; see {reverse('openapi')}.", 404
        )
    return render(request, "404.html", status=404)
