"""The site's URLs, plus a page that renders a template without the database: the framework's
ceiling, against which `make bench` reads the learner's lesson page."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path
from django.views.decorators.http import require_safe

# The site's error handlers too, as Django looks them up in the root URLconf.
from lightmysky.urls import handler400, handler404, handler500  # noqa: F401
from lightmysky.urls import urlpatterns as site_urlpatterns


@require_safe
def bare(request: HttpRequest) -> HttpResponse:
    """A lesson-page-sized template, rendered without the database."""
    paragraphs = ["Stars light as they are learned and dim when it is time to come back. " * 6] * 48
    return render(request, "bench/bare.html", {"paragraphs": paragraphs})


urlpatterns = [*site_urlpatterns, path("bench/bare", bare)]
