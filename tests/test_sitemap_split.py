"""The sitemap splits into an index of files once a section passes a sitemap's 50,000
addresses (here, a limit of 2 stands in for it)."""

from __future__ import annotations

from xml.etree import ElementTree

from lessons.models import Lesson
from lightmysky.sitemaps import LessonSitemap

SITE = "http://127.0.0.1:8000"
NS = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}


def locations(response, element: str) -> list[str]:
    assert response.status_code == 200 and response["Content-Type"] == "application/xml"
    return [loc.text for loc in ElementTree.fromstring(response.content).findall(element, NS)]


def test_a_sitemap_is_one_file_until_a_section_passes_the_limit(client, demo):
    assert LessonSitemap.limit == 50_000
    assert len(locations(client.get("/sitemap.xml"), "s:url/s:loc")) == 2 + 3


def test_past_the_limit_the_sitemap_is_an_index_of_files(client, demo, monkeypatch):
    monkeypatch.setattr(LessonSitemap, "limit", 2)
    index = locations(client.get("/sitemap.xml"), "s:sitemap/s:loc")
    assert index == [
        f"{SITE}/sitemap-home.xml",
        f"{SITE}/sitemap-subjects.xml",
        f"{SITE}/sitemap-lessons.xml",
        f"{SITE}/sitemap-lessons.xml?p=2",
    ]
    listed = []
    for url in index:
        listed += locations(client.get(url.removeprefix(SITE)), "s:url/s:loc")
    expected = {f"{SITE}/", f"{SITE}/learn/computing/"} | {
        SITE + lesson.get_absolute_url() for lesson in Lesson.objects.published()
    }
    assert sorted(listed) == sorted(expected)
    assert client.get("/sitemap-nothing.xml").status_code == 404
    assert client.get("/sitemap-lessons.xml", {"p": "9"}).status_code == 404
