"""A cookie-keeping HTTP client, for `make bench` and the operations tests."""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from http.cookiejar import CookieJar
from urllib.parse import urlencode


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


class Browser:
    """A cookie-keeping HTTP client that, like a browser, can talk to any of several servers."""

    def __init__(self) -> None:
        self.cookies = CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.cookies), _NoRedirect
        )

    def request(self, url: str, data: dict | None = None) -> tuple[int, str]:
        status, body, _ = self.fetch(url, data)
        return status, body

    def fetch(self, url: str, data: dict | None = None) -> tuple[int, str, str]:
        """(status, body, Location) of one request; redirects are not followed."""
        body = urlencode(data, doseq=True).encode() if data is not None else None
        try:
            with self.opener.open(urllib.request.Request(url, data=body), timeout=30) as response:
                return response.status, response.read().decode(), ""
        except urllib.error.HTTPError as error:
            with error:
                return error.code, error.read().decode(), error.headers.get("Location", "")

    def csrf(self) -> str:
        return next(c.value or "" for c in self.cookies if c.name == "csrftoken")


def answer_form(html: str) -> tuple[str, str] | None:
    """The token and the first choice shown (its identity) of the question on a practice page."""
    token = re.search(r'name="token" value="([^"]+)"', html)
    choice = re.search(r'name="choice" value="([\w-]+)"', html)
    return (token[1], choice[1]) if token and choice else None
