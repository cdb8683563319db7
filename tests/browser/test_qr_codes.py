"""The QR codes the site draws scan: screenshots of them as shown, at device pixel ratios 1 and
2, on a phone and a desktop, decode with zbar to the address they stand for."""

from __future__ import annotations

import pytest
from django.conf import settings
from playwright.sync_api import expect

from tests.browser.pages import answer_first_question

SIZES = {"phone": {"width": 360, "height": 740}, "desktop": {"width": 1280, "height": 800}}


@pytest.mark.parametrize("ratio", [1, 2])
@pytest.mark.parametrize("size", list(SIZES))
def test_the_transfer_code_scans_to_the_adopt_address(
    browser, live_server, seed, read_qr, size, ratio
):
    context = browser.new_context(viewport=SIZES[size], device_scale_factor=ratio)
    page = context.new_page()
    answer_first_question(page, live_server.url)
    page.goto(live_server.url + "/progress")
    page.get_by_role("button", name="Make a one-time code").click()
    code = page.locator(".transfer-code .code").inner_text().split(":")[-1].strip()
    qr = page.locator(".qr-figure svg")
    expect(qr).to_be_visible()
    box = qr.bounding_box()
    assert box and box["width"] >= 150 and abs(box["width"] - box["height"]) < 1, box
    decoded = read_qr(qr.screenshot())
    context.close()
    assert decoded == [f"{settings.SITE_URL}/progress/adopt?code={code}"]
