from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

# Public, read-only resources that any site may fetch from a browser.
OPEN_READ_PREFIXES = ("/api/", "/openapi.json", "/llms", "/.well-known/", "/index.md")


def open_reads_middleware(get_response: Callable[[HttpRequest], HttpResponse]):
    """Allow cross-origin GET of the API and the agent files; nothing else, and no credentials."""

    def middleware(request: HttpRequest) -> HttpResponse:
        response = get_response(request)
        path = request.path
        if request.method in ("GET", "HEAD") and (
            path.startswith(OPEN_READ_PREFIXES) or path.endswith(".md")
        ):
            response["Access-Control-Allow-Origin"] = "*"
        return response

    return middleware
