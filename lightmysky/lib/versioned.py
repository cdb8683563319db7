"""Values cached under the content version: rebuilt after any edit, once in each process that
reads them (the "pages" cache is per process unless CACHE_URL shares it)."""

from __future__ import annotations

from collections.abc import Callable

from django.core.cache import caches

MISSING = object()
LIFETIME = 60 * 60 * 24


def versioned[T](name: str, version: int, build: Callable[[], T]) -> T:
    """`build()` once per content version; later calls read the cache."""
    key = f"v{version}:{name}"
    value = caches["pages"].get(key, MISSING)
    if value is MISSING:
        value = build()
        caches["pages"].set(key, value, LIFETIME)
    return value
