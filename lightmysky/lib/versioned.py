"""Values cached under the content version: rebuilt after any edit, once in each process that
reads them (the "pages" cache is per process unless CACHE_URL shares it)."""

from __future__ import annotations

import uuid
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


_in_process: dict[str, tuple[str, object]] = {}


def versioned_in_process[T](name: str, version: int, build: Callable[[], T]) -> T:
    """Like `versioned`, for values too large to unpickle from the cache on every request (the
    sky's map of a whole catalogue): the value stays in this process's memory, and the cache
    holds only a token naming the build. Every process adopts the first token written for a
    version (so a shared cache does not make them rebuild in turn); a new version or a cleared
    cache means a new token, and a rebuild. One value per name is kept."""
    key = f"v{version}:{name}:token"
    token = caches["pages"].get(key)
    held = _in_process.get(name)
    if token is not None and held is not None and held[0] == token:
        return held[1]  # type: ignore[return-value]
    value = build()
    caches["pages"].add(key, uuid.uuid4().hex, LIFETIME)
    _in_process[name] = (caches["pages"].get(key), value)
    return value
