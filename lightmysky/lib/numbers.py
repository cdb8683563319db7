from __future__ import annotations


def small_int(text: str | None, *, limit: int = 1_000_000_000) -> int | None:
    """A non-negative whole number written in ASCII digits, or None for anything else.

    `str.isdigit()` alone accepts "²" and Arabic-Indic digits, and int() of a huge string is
    slow or refused; query strings come from anyone.
    """
    if not text or not text.isascii() or not text.isdigit() or len(text) > len(str(limit)):
        return None
    number = int(text)
    return number if number <= limit else None
