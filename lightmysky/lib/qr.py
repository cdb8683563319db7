"""QR codes drawn on the server as inline SVG (segno: pure Python, no image libraries)."""

from __future__ import annotations

import io
from functools import lru_cache

import segno
from django.utils.safestring import SafeString, mark_safe


def qr_svg(text: str, *, title: str = "QR code") -> SafeString:
    """An SVG QR code of the text; safe to inline (segno escapes the title, the rest is paths).

    It has a viewBox and no width or height, so CSS scales the whole code: a fixed size with no
    viewBox clipped the drawing instead, and the clipped code did not scan."""
    buffer = io.BytesIO()
    segno.make(text, error="m").save(
        buffer,
        kind="svg",
        scale=5,
        border=3,
        xmldecl=False,
        svgns=True,
        omitsize=True,
        title=title,
        dark="#000000",
        light="#ffffff",
        svgclass="qr",
        lineclass=None,
    )
    return mark_safe(buffer.getvalue().decode())  # noqa: S308 - generated markup, no user HTML


@lru_cache(maxsize=1024)
def qr_svg_cached(text: str, *, title: str = "QR code") -> SafeString:
    """`qr_svg` for a text drawn again and again, like a worksheet's address: segno picks the
    best of eight masks in pure Python (about 25 ms), so each process draws it once."""
    return qr_svg(text, title=title)
