"""The request as this site's middleware and helpers leave it, for the type checker."""

from __future__ import annotations

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class SiteRequest(HttpRequest):
    htmx: HtmxDetails  # django-htmx's middleware
    content_version: int  # read once per request by ContentVersion.for_request
    request_id: str  # nginx's X-Request-ID, or one of our own (lightmysky.middleware)
    rate_limit_refused: str  # the scope of a limit that refused it (lightmysky.ratelimit)
