"""Values cached under the content version: rebuilt once after any edit, on every server."""

from __future__ import annotations

from collections.abc import Callable

from django.core.cache import caches
from django.http import HttpRequest

MISSING = object()
LIFETIME = 60 * 60 * 24


def content_version(request: HttpRequest | None = None) -> int:
    """The content version, read once per request (one small query)."""
    from lessons.models import ContentVersion

    if request is None:
        return ContentVersion.current()
    if not hasattr(request, "content_version"):
        request.content_version = ContentVersion.current()
    return request.content_version


def versioned[T](name: str, version: int, build: Callable[[], T]) -> T:
    """`build()` once per content version; later calls read the cache."""
    key = f"v{version}:{name}"
    value = caches["pages"].get(key, MISSING)
    if value is MISSING:
        value = build()
        caches["pages"].set(key, value, LIFETIME)
    return value


_in_process: dict[str, tuple[str, object]] = {}


def versioned_in_process[T](name: str, version: int, build: Callable[[], T]) -> T:
    """Like `versioned`, for values too large to unpickle from the cache on every request (the
    sky's map of a whole catalogue): the value stays in this process's memory, and the shared
    cache holds only a token naming the build, so clearing the cache or a new version rebuilds
    it. One value per name is kept."""
    import uuid

    key = f"v{version}:{name}:token"
    token = caches["pages"].get(key)
    held = _in_process.get(name)
    if token is not None and held is not None and held[0] == token:
        return held[1]  # type: ignore[return-value]
    value = build()
    token = uuid.uuid4().hex
    caches["pages"].set(key, token, LIFETIME)
    _in_process[name] = (token, value)
    return value
