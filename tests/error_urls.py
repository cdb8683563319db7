"""The site's addresses and two that fail, for the tests of error reports."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import path

from lightmysky.urls import handler400, handler404, handler500
from lightmysky.urls import urlpatterns as site_urlpatterns

__all__ = ["handler400", "handler404", "handler500", "urlpatterns"]


def broken(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("a bug for the error-mail tests")


def broken_otherwise(request: HttpRequest) -> HttpResponse:
    raise LookupError("another bug for the error-mail tests")


urlpatterns = [
    path("broken", broken, name="broken"),
    path("broken-otherwise", broken_otherwise, name="broken_otherwise"),
    *site_urlpatterns,
]
