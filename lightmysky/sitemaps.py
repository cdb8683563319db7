from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.sitemaps import Sitemap
from django.contrib.sitemaps.views import SitemapIndexItem, sitemap, x_robots_tag
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_safe

from lessons.models import Lesson, Subject


class SiteSitemap(Sitemap):
    """Addresses on SITE_URL, the same canonical origin every page names."""

    def get_domain(self, site=None) -> str:
        return urlsplit(settings.SITE_URL).netloc

    def get_protocol(self, protocol=None) -> str:
        return urlsplit(settings.SITE_URL).scheme


class HomeSitemap(SiteSitemap):
    def items(self) -> list[str]:
        return ["lessons:home"]

    def location(self, item: str) -> str:
        return reverse(item)


class SubjectSitemap(SiteSitemap):
    def items(self):
        return Subject.objects.filter(lessons__status=Lesson.Status.PUBLISHED).distinct()


class LessonSitemap(SiteSitemap):
    def items(self):
        return Lesson.objects.published().select_related("subject").order_by("pk")

    def lastmod(self, lesson: Lesson):
        return lesson.updated_at


SITEMAPS: dict[str, type[Sitemap] | Sitemap] = {
    "home": HomeSitemap,
    "subjects": SubjectSitemap,
    "lessons": LessonSitemap,
}


@require_safe
def sitemap_xml(request: HttpRequest) -> HttpResponse:
    """/sitemap.xml: every address in one file while each section fits one (a sitemap holds at
    most 50,000 addresses); past that, an index of the sections' pages, each its own file."""
    sections: dict[str, Sitemap] = {
        name: section() if isinstance(section, type) else section
        for name, section in SITEMAPS.items()
    }
    if all(section.paginator.num_pages <= 1 for section in sections.values()):
        return sitemap(request, sitemaps=SITEMAPS)
    return _index(request, sections)


@x_robots_tag
def _index(request: HttpRequest, sections: dict[str, Sitemap]) -> HttpResponse:
    pages = [
        SitemapIndexItem(
            settings.SITE_URL
            + reverse("sitemap_section", args=[name])
            + (f"?p={page}" if page > 1 else ""),
            None,
        )
        for name, section in sections.items()
        for page in section.paginator.page_range
    ]
    return TemplateResponse(
        request, "sitemap_index.xml", {"sitemaps": pages}, content_type="application/xml"
    )


@require_safe
def sitemap_section(request: HttpRequest, section: str) -> HttpResponse:
    """One section of the index (`?p=2` for its second 50,000 addresses)."""
    return sitemap(request, sitemaps=SITEMAPS, section=section)
