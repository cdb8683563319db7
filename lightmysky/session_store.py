"""Sessions kept in the database and read through the Redis of CACHE_URL while it answers.

Django's cached_db store forgives a failed cache read and write, but not the check of a new
session key nor the write after a read from the database, so with Redis down a new learner's
first answer would be a 500. Here a failed call is a cache miss (the
database has every session), counted in /metrics and warned of once a minute. A failed delete
still fails the request: a session ended in the database must not live on in the cache.
"""

from __future__ import annotations

from typing import Any

import redis
from django.conf import settings
from django.contrib.sessions.backends import cached_db
from django.core.cache import caches

from lightmysky.ratelimit import cache_failed

CONSEQUENCE = "sessions read from the database"


class _CacheOrMiss:
    """The session cache, where a failed read or write is a miss."""

    def __init__(self, cache: Any) -> None:
        self._cache = cache

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self._cache.get(key, default)
        except redis.RedisError as error:
            cache_failed(error, consequence=CONSEQUENCE)
            return default

    def set(self, key: str, value: Any, timeout: Any = None) -> None:
        try:
            self._cache.set(key, value, timeout)
        except redis.RedisError as error:
            cache_failed(error, consequence=CONSEQUENCE)

    def __contains__(self, key: str) -> bool:
        try:
            return key in self._cache
        except redis.RedisError as error:
            cache_failed(error, consequence=CONSEQUENCE)
            return False

    def delete(self, key: str) -> None:
        self._cache.delete(key)


class SessionStore(cached_db.SessionStore):
    def __init__(self, session_key: str | None = None) -> None:
        super().__init__(session_key)
        self._cache: Any = _CacheOrMiss(caches[settings.SESSION_CACHE_ALIAS])
