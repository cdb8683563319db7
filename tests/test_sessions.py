"""A browser's session ends at its expiry date: after it, the browser is a new visitor."""

from __future__ import annotations

from datetime import timedelta

import time_machine
from django.conf import settings
from django.contrib.sessions.models import Session
from django.test import Client
from django.utils import timezone

from lightmysky import ratelimit
from practice.models import Learner, Review
from tests.conftest import SEED_PATH
from tests.practice.helpers import answer, counter_text

ONE_ANSWER = "This browser has <strong>1 answer</strong>"
NOTHING_YET = "Nothing yet. The first answer you give creates your progress"


def learner_whose_session_has_expired(browser: Client, demo) -> Learner:
    """The browser answers once, then its session's expiry date passes (its cookie is kept)."""
    assert answer(browser, demo, right=True).status_code == 302
    assert ONE_ANSWER in browser.get("/progress").content.decode()
    assert counter_text(browser.get(SEED_PATH).content.decode()) == "Your sky: 1 kindled"
    session_key = browser.cookies[settings.SESSION_COOKIE_NAME].value
    ended = timezone.now() - timedelta(minutes=1)
    assert Session.objects.filter(session_key=session_key).update(expire_date=ended) == 1
    return Learner.objects.get()


def test_a_session_past_its_expiry_date_shows_the_browser_no_progress(demo):
    """After the session's expiry date the browser's pages are a new browser's: no answers on
    /progress, nothing learned on the lesson page."""
    browser = Client()
    learner_whose_session_has_expired(browser, demo)
    progress = browser.get("/progress").content.decode()
    assert NOTHING_YET in progress and ONE_ANSWER not in progress
    lesson_page = browser.get(SEED_PATH).content.decode()
    assert counter_text(lesson_page) == "Your sky"


def test_an_answer_after_the_session_expired_starts_a_new_learner(demo):
    """The first answer after the session's expiry date starts a new learner and is recorded
    for it; the old learner's answers stay as they were."""
    browser = Client()
    old = learner_whose_session_has_expired(browser, demo)
    # Later than first answers sent at once could be (services.FIRST_ANSWERS_RACE): those
    # share one learner through the browser's CSRF cookie, which outlives the session.
    with time_machine.travel(timezone.now() + timedelta(minutes=5)):
        assert answer(browser, demo, right=True).status_code == 302
    new = Learner.objects.exclude(pk=old.pk).get()
    assert Review.objects.filter(learner=old).count() == 1
    assert Review.objects.filter(learner=new).count() == 1
    assert ONE_ANSWER in browser.get("/progress").content.decode()


DEAD_REDIS = "redis://127.0.0.1:1/0"


def test_with_the_session_cache_down_learners_answer_and_the_failures_are_counted(
    demo, settings, tmp_path, monkeypatch, caplog
):
    # CACHE_URL=redis:// with that Redis stopped: sessions, like rate limits, go without it.
    settings.CACHES = settings.CACHES | {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": DEAD_REDIS,
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
    settings.SESSION_ENGINE = "lightmysky.session_store"
    settings.RATE_LIMIT_REDIS_URL = DEAD_REDIS
    settings.METRICS_DIR = str(tmp_path)
    monkeypatch.setattr(ratelimit, "_cache_warned_at", -ratelimit.CACHE_WARNING_INTERVAL)
    browser = Client()
    assert answer(browser, demo, right=True).status_code == 302  # a new session is made
    assert answer(browser, demo, right=True).status_code == 302  # and read again
    progress = browser.get("/progress").content.decode()
    assert "This browser has <strong>2 answers</strong>" in progress
    assert Review.objects.count() == 2
    scraped = browser.get("/metrics").content.decode()
    failures = int(scraped.split("\nlightmysky_cache_errors_total ")[1].split()[0])
    assert failures >= 4  # two rate-limit counts and at least a session read and write each
    warnings = [r for r in caplog.records if "the cache is unreachable" in r.getMessage()]
    assert len(warnings) == 1
