"""QR codes drawn on the server as inline SVG (segno: pure Python, no image libraries)."""

from __future__ import annotations

import io

import segno
from django.utils.safestring import SafeString, mark_safe


def qr_svg(text: str, *, title: str = "QR code") -> SafeString:
    """An SVG QR code of the text; safe to inline (segno escapes the title, the rest is paths)."""
    buffer = io.BytesIO()
    segno.make(text, error="m").save(
        buffer,
        kind="svg",
        scale=5,
        border=3,
        xmldecl=False,
        svgns=True,
        title=title,
        dark="#000000",
        light="#ffffff",
        svgclass="qr",
        lineclass=None,
    )
    return mark_safe(buffer.getvalue().decode())  # noqa: S308 - generated markup, no user HTML
