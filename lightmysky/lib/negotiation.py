"""Serving a page's Markdown twin: the `.md` address, `?mode=agent`, or `Accept: text/markdown`."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.cache import patch_vary_headers

MARKDOWN_TYPE = "text/markdown; charset=utf-8"


def wants_markdown(request: HttpRequest) -> bool:
    """True when the client prefers Markdown to HTML, by q-value; a browser's Accept gets HTML."""
    if request.GET.get("mode") == "agent":
        return True
    return request.get_preferred_type(["text/html", "text/markdown"]) == "text/markdown"


def markdown_response(request: HttpRequest, template: str, context: dict) -> HttpResponse:
    response = HttpResponse(
        render_to_string(template, context, request=request), content_type=MARKDOWN_TYPE
    )
    return vary_on_accept(response)


def page_or_twin(
    request: HttpRequest, context: dict, *, html: str, markdown: str, twin: bool = False
) -> HttpResponse:
    """The HTML page, or its Markdown twin when asked for (`twin`, or by the request)."""
    if twin or wants_markdown(request):
        return markdown_response(request, markdown, context)
    return vary_on_accept(render(request, html, context))


def vary_on_accept(response: HttpResponse) -> HttpResponse:
    patch_vary_headers(response, ["Accept"])
    return response
