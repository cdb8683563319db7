"""Values cached under the content version: built again after any edit, once in each process
that reads them (the "pages" cache is each process's own memory)."""

from __future__ import annotations

from collections.abc import Callable

from django.core.cache import caches

MISSING = object()
LIFETIME = 60 * 60 * 24


def versioned[T](name: str, version: int, build: Callable[[], T]) -> T:
    """`build()` once per content version; later calls read the cache. `name` must say
    everything else the value depends on (a lesson's public id, say)."""
    key = f"v{version}:{name}"
    value = caches["pages"].get(key, MISSING)
    if value is MISSING:
        value = build()
        caches["pages"].set(key, value, LIFETIME)
    return value
