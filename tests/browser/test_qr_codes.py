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
    # Focus starts on the code's heading, not at the top of the page.
    expect(page.get_by_role("heading", name="Your one-time code")).to_be_focused()
    qr = page.locator(".qr-figure svg")
    expect(qr).to_be_visible()
    box = qr.bounding_box()
    assert box and box["width"] >= 150 and abs(box["width"] - box["height"]) < 1, box
    # The learner lands on the code and its QR code: both on the first screen, nothing to scroll.
    assert page.evaluate("window.scrollY") == 0
    for shown in (page.locator(".transfer-code .code"), qr):
        box = shown.bounding_box()
        assert box and box["y"] >= 0 and box["y"] + box["height"] <= SIZES[size]["height"], box
    decoded = read_qr(qr.screenshot())
    assert decoded == [f"{settings.SITE_URL}/progress/adopt?code={code}"]

    # Scanned on another device: one question, asked before anything changes.
    other = browser.new_context(viewport=SIZES[size])
    phone = other.new_page()
    phone.goto(decoded[0].replace(settings.SITE_URL, live_server.url))
    expect(phone.get_by_role("heading", level=1)).to_have_text("Bring your progress here?")
    expect(phone.get_by_role("heading", level=1)).to_be_focused()
    confirm = phone.get_by_role("button", name="Yes, bring it here")
    box = confirm.bounding_box()
    assert box and box["y"] + box["height"] <= SIZES[size]["height"], box
    confirm.click()
    expect(phone.get_by_text("This browser now carries the progress")).to_be_focused()
    other.close()
    context.close()
