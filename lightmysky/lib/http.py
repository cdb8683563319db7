"""The request as this site's middleware and helpers leave it: its type, and its client."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class SiteRequest(HttpRequest):
    htmx: HtmxDetails  # django-htmx's middleware
    content_version: int  # read once per request by ContentVersion.for_request


# X-Forwarded-For can carry anything; a longer "address" is cut to fit the counter's key.
ADDRESS_MAX_LENGTH = 100


def client_address(request: HttpRequest) -> str:
    """The client's address; behind trusted proxies, the one the outermost of them reports.

    Each proxy appends the address it received the request from to X-Forwarded-For, so with
    TRUSTED_PROXY_HOPS proxies (a load balancer and nginx: 2) the client is that many entries
    from the end; anything further left was written by the client and proves nothing."""
    if settings.TRUST_X_FORWARDED_FOR:
        forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        if forwarded != [""]:
            return forwarded[-min(settings.TRUSTED_PROXY_HOPS, len(forwarded))]
    return request.META.get("REMOTE_ADDR", "unknown")
