from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.sitemaps import Sitemap
from django.urls import reverse

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


SITEMAPS = {"home": HomeSitemap, "subjects": SubjectSitemap, "lessons": LessonSitemap}
