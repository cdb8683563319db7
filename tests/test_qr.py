"""QR codes drawn on the server scale with the page instead of being clipped."""

from __future__ import annotations

import re

from lightmysky.lib.qr import qr_svg, qr_svg_cached


def test_a_qr_code_has_a_view_box_and_no_fixed_size():
    svg = qr_svg("http://127.0.0.1:8000/progress/adopt?code=ABCD-EFGH", title="Scan me")
    opening = re.match(r"<svg[^>]*>", svg)[0]
    assert re.search(r'viewBox="0 0 (\d+) \1"', opening), opening
    assert "width=" not in opening and "height=" not in opening
    assert "<title>Scan me</title>" in svg


def test_the_title_is_escaped():
    assert "<title>a &lt;b&gt; &amp; c</title>" in qr_svg("x", title="a <b> & c")


def test_a_code_drawn_again_comes_from_the_cache():
    first = qr_svg_cached("https://lightmysky.example/w/ABC234", title="t")
    assert qr_svg_cached("https://lightmysky.example/w/ABC234", title="t") is first
    assert first == qr_svg("https://lightmysky.example/w/ABC234", title="t")
