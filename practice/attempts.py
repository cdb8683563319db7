"""One-time attempt tokens carried by every answer form.

A token names what the form asks (lesson, item, and the round step or a random nonce) and is
signed, so it cannot be forged or pointed at another item. The same token submitted twice is the
same attempt: it records one review, whatever the timing.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import cast

from django.conf import settings
from django.core import signing
from django.utils.crypto import salted_hmac

SALT = "practice.attempt"


class BadSubmission(Exception):
    """A submission that cannot be accepted; the message says why, in the learner's words."""


@dataclass(frozen=True)
class Attempt:
    lesson_id: int
    kind: str  # "question", "flashcard" or "worksheet"
    item_id: int
    issued_at: float  # seconds since the epoch
    round_key: str = ""
    round_step: int | None = None
    nonce: str = ""
    # Asked again after the learner was shown the answer: recorded as practice, not scheduled.
    practice: bool = False
    # A new round's first question carries the order the round was shown in (question ids),
    # so the round starts in that order whatever fell due between showing and answering.
    round_order: tuple[int, ...] = ()

    @property
    def key(self) -> str:
        """What makes this attempt unique for a learner; it also seeds the order in which the
        question's choices are shown."""
        if self.round_key:
            return round_attempt_key(self.round_key, self.round_step)
        return once_attempt_key(self.nonce)

    @property
    def shown_at(self) -> datetime:
        """When the form was shown (its token was issued)."""
        return datetime.fromtimestamp(self.issued_at, UTC)

    def duration_ms(self) -> int:
        """Time from showing the form to the answer, capped so a forgotten tab does not skew it."""
        return int(min(max(time.time() - self.issued_at, 0), 600) * 1000)


def round_attempt_key(round_key: str, step: int | None) -> str:
    return f"round:{round_key}:{step}"


def once_attempt_key(nonce: str) -> str:
    return f"once:{nonce}"


def new_nonce() -> str:
    """What makes a token issued once unique, and (`once_attempt_key`) seeds its choice order."""
    return secrets.token_urlsafe(12)


def issue_for_round(
    *, lesson_id: int, question_id: int, round_key: str, step: int, order: list[int] | None = None
) -> str:
    payload = {"l": lesson_id, "k": "question", "i": question_id, "r": round_key, "s": step}
    return _sign(payload | ({"o": order} if order else {}))


def issue_once(
    *, lesson_id: int, kind: str, item_id: int, practice: bool = False, nonce: str | None = None
) -> str:
    payload = {"l": lesson_id, "k": kind, "i": item_id, "n": nonce or new_nonce()}
    return _sign(payload | ({"p": 1} if practice else {}))


def stable_key(*parts: object) -> str:
    """A key that is the same each time for the same parts, and unguessable without the
    site's secret: a page shown again before it is answered is the same attempt, with its
    choices in the same order."""
    message = ":".join(str(part) for part in parts)
    return salted_hmac("practice.stable-key", message, algorithm="sha256").hexdigest()[:16]


def issue_for_worksheet(*, lesson_id: int) -> str:
    """One token for a whole paper worksheet: its answers count once, however often sent."""
    payload = {"l": lesson_id, "k": "worksheet", "i": 0, "n": new_nonce()}
    return _sign(payload)


def _sign(payload: dict) -> str:
    return signing.dumps(payload | {"t": round(time.time(), 3)}, salt=SALT, compress=False)


# An answer's token is read twice: before its rate-limit count, to read its round with the
# session, and by its view. The second read of a token still valid gives the first's attempt.
_last_read: tuple[str, Attempt] | None = None


def read(token: str | None) -> Attempt:
    global _last_read
    last = _last_read
    if last and last[0] == token and time.time() - last[1].issued_at < _still_valid_for():
        return last[1]
    attempt = _read(token)
    _last_read = (cast(str, token), attempt)
    return attempt


def _still_valid_for() -> float:
    # The signature keeps whole seconds, up to one before the token's "t"; one more for margin.
    return settings.ATTEMPT_TOKEN_MAX_AGE - 2


def _read(token: str | None) -> Attempt:
    if not token:
        raise BadSubmission(
            "The form had no attempt token, so it did not come from this site's page. "
            "Reload the question and answer it again."
        )
    try:
        payload = signing.loads(token, salt=SALT, max_age=settings.ATTEMPT_TOKEN_MAX_AGE)
    except signing.SignatureExpired:
        raise BadSubmission(
            "This form is too old to accept. Reload the page to get the question again."
        ) from None
    except signing.BadSignature:
        raise BadSubmission(
            "This form was changed or damaged on its way, so the answer was not recorded. "
            "Reload the page and answer again."
        ) from None
    try:
        return Attempt(
            lesson_id=int(payload["l"]),
            kind=str(payload["k"]),
            item_id=int(payload["i"]),
            issued_at=float(payload["t"]),
            round_key=str(payload.get("r", "")),
            round_step=int(payload["s"]) if "s" in payload else None,
            nonce=str(payload.get("n", "")),
            practice=payload.get("p") == 1,
            round_order=tuple(int(pk) for pk in payload.get("o", ())),
        )
    except (KeyError, TypeError, ValueError):
        raise BadSubmission("This form's attempt token is not one this site makes.") from None
