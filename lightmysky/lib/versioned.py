"""Values cached under the content version: rebuilt after any edit, once in each process that
reads them (the "pages" cache is per process unless CACHE_URL shares it)."""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import Callable

from django.conf import settings
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


_held: OrderedDict[str, object] = OrderedDict()


def versioned_in_memory[T](name: str, version: int, build: Callable[[], T]) -> T:
    """Like `versioned`, for values every learner's page reads (a lesson's page data and
    article): kept in this process's memory as they are, since unpickling a lesson's model
    instances from the cache on every request cost a quarter of the page. The cache holds only
    a token for the version, as for `versioned_in_process` (a cleared cache, or a new version,
    means new keys); the least recently used of at most PAGE_CACHE_ENTRIES values go first. The
    values are shared by every request of the process: never change them (a value may fill in
    parts it computes alike every time, as a lesson's page does its neighbours)."""
    key = f"v{version}:memory-token"
    token = caches["pages"].get(key)
    if token is None:
        caches["pages"].add(key, uuid.uuid4().hex, LIFETIME)
        token = caches["pages"].get(key)
    held_key = f"{token}:{name}"
    if held_key in _held:
        _held.move_to_end(held_key)
        return _held[held_key]  # type: ignore[return-value]
    value = build()
    _held[held_key] = value
    while len(_held) > settings.PAGE_CACHE_ENTRIES:
        _held.popitem(last=False)
    return value
