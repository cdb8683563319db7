from __future__ import annotations

import io
import json
import re
from datetime import datetime, timedelta

import pytest
import time_machine
from django.contrib.sessions.models import Session
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from practice.models import Learner, Memory, Review, Round, TransferCode
from tests.practice.helpers import answer, exported, finish_round


def upload(client: Client, document: dict | bytes, name: str = "progress.json"):
    """The page an import ends on: its result on the progress page (after the redirect that
    keeps a reload from sending the file again), or the refusal."""
    content = document if isinstance(document, bytes) else json.dumps(document).encode()
    return client.post("/progress/import", {"file": SimpleUploadedFile(name, content)}, follow=True)


def shift(document: dict, days: int) -> dict:
    """The same export, as if everything had happened `days` earlier."""

    def earlier(value: str | None) -> str | None:
        if value is None:
            return None
        moment = datetime.fromisoformat(value.replace("Z", "+00:00")) - timedelta(days=days)
        return moment.isoformat().replace("+00:00", "Z")

    for item in document["items"]:
        item["due"], item["last_review"] = earlier(item["due"]), earlier(item["last_review"])
        for review in item["reviews"]:
            review["reviewed_at"] = earlier(review["reviewed_at"])
    return document


def test_progress_page_says_what_is_stored_in_plain_words(client, demo):
    html = client.get("/progress").content.decode()
    assert "Nothing yet." in html and "There is no account." in html
    # A visitor: no learner, no session cookie, and the page says so.
    assert "sessionid" not in client.cookies
    assert "This browser has no learner id. Your first answer sets the cookie" in html
    assert "two cookies" not in html
    finish_round(client, demo, [True] * 8)
    html = client.get("/progress").content.decode()
    assert "<strong>8 answers</strong> on <strong>8 items</strong> across 1 lesson" in html
    assert 'href="/progress/export"' in html
    # The page names every cookie the browser now holds from the site, and nothing else.
    assert set(client.cookies) == {"sessionid", "csrftoken"}
    assert "two cookies from this site: <code>sessionid</code>" in html
    assert "and <code>csrftoken</code>" in html


def test_progress_page_reads_as_plain_english_for_one_day_and_one_star(client, demo):
    """A first day's answers are "all on" that day, not "from it to it"; one star lit is
    "has been lit", not "have"."""
    finish_round(client, demo, [True] * 8)
    day = timezone.localtime(Review.objects.latest("reviewed_at").reviewed_at)
    html = client.get("/progress").content.decode()
    text = re.sub(r"<[^>]+>", "", html)
    assert f"across 1 lesson, all on {day.day} {day:%B %Y} (UTC)." in text
    assert "0 of your stars have been lit at least once" in html
    Memory.objects.filter(pk=Memory.objects.first().pk).update(lit_at=timezone.now())
    html = client.get("/progress").content.decode()
    assert "1 of your stars has been lit at least once" in html
    with time_machine.travel(timezone.now() + timedelta(days=3)):
        answer(client, demo, right=True)
        html = client.get("/progress").content.decode()
    later = timezone.localtime(Review.objects.latest("reviewed_at").reviewed_at)
    text = re.sub(r"<[^>]+>", "", html)
    assert f", from {day.day} {day:%B %Y} to {later.day} {later:%B %Y} (UTC)." in text


def test_an_import_ends_on_its_result_and_a_reload_does_not_send_the_file_again(client, demo):
    finish_round(client, demo, [True] * 8)
    saved = json.dumps(exported(client)).encode()
    fresh = Client()
    posted = fresh.post("/progress/import", {"file": SimpleUploadedFile("p.json", saved)})
    # To the result, on the progress page: the address's fragment scrolls to it and focuses it.
    assert posted.status_code == 302 and posted["Location"] == "/progress#import-outcome"
    page = fresh.get(posted["Location"]).content.decode()
    assert (
        '<p class="notice" role="status" id="import-outcome" tabindex="-1">Imported 8 items: '
        "8 new answers, 8 stars brought up to date.</p>"
    ) in page
    assert "Imported" not in fresh.get("/progress").content.decode()  # said once
    assert Review.objects.count() == 16
    # Two imports before the page is seen: only the last is told.
    for _ in range(2):
        fresh.post("/progress/import", {"file": SimpleUploadedFile("p.json", saved)})
    again = fresh.get("/progress").content.decode()
    assert again.count('id="import-outcome"') == 1
    # The same file again brings nothing new, and is not said to have imported anything.
    assert "Nothing new: this browser already had every answer the file holds for its 8" in again
    # A refused file is told where the form is: its action's fragment leads to the message.
    refused = fresh.post("/progress/import", {"file": SimpleUploadedFile("p.json", b"[")})
    assert refused.status_code == 400
    html = refused.content.decode()
    assert 'action="/progress/import#import-error"' in html
    assert 'role="alert" id="import-error" tabindex="-1">That file' in html


def test_an_old_export_imported_in_a_fresh_browser_shows_those_stars_due(client, demo):
    finish_round(client, demo, [True] * 6 + [False] * 2 + [False] * 2)
    document = shift(exported(client), days=120)
    fresh = Client()
    response = upload(fresh, document)
    assert response.status_code == 200
    assert (
        "Imported 8 items: 10 new answers, 8 stars brought up to date" in response.content.decode()
    )
    html = fresh.get("/sky").content.decode()
    unlit = demo.questions.count() + demo.flashcards.count() - 8
    # The two missed long ago have come due too: every answered star is due. The counts cover
    # the one lesson started, not the whole catalogue.
    assert "<strong>0 lit · 6 kindled</strong> · 8 due" in html
    assert f"0 lit, 6 kindled and {unlit + 2} unlit" in html and "8 due and 2 missed" in html
    assert '<a class="button" href="/review">8 due: review now</a>' in html
    assert Review.objects.filter(learner__public_id=fresh.session["learner"]).count() == 10


def test_import_merges_by_item_keeping_the_newer_state_and_both_logs(client, demo):
    finish_round(client, demo, [True] * 8)
    old = shift(exported(client), days=30)
    other = Client()
    with time_machine.travel(timezone.now() - timedelta(days=10), tick=False):
        answer(other, demo, right=False)  # question 1, ten days ago: older than... nothing
    learner = Learner.objects.get(public_id=other.session["learner"])
    first = Memory.objects.get(learner=learner)
    assert first.last_rating == 1
    upload(other, old)
    first.refresh_from_db()
    assert first.last_rating == 1  # its own review (10 days ago) is newer than the file's (30)
    assert Review.objects.filter(learner=learner).count() == 9
    assert Memory.objects.filter(learner=learner).count() == 8


def test_importing_the_same_file_twice_changes_nothing_the_second_time(client, demo):
    finish_round(client, demo, [True] * 8)
    document = exported(client)
    other = Client()
    upload(other, document)
    before = (Review.objects.count(), list(Memory.objects.values().order_by("pk")))
    response = upload(other, document)
    assert "Nothing new: this browser already had every answer" in response.content.decode()
    assert (Review.objects.count(), list(Memory.objects.values().order_by("pk"))) == before


def test_items_that_are_not_on_the_site_are_skipped(client, demo):
    finish_round(client, demo, [True] * 8)
    document = exported(client)
    document["items"][0]["item"] = "question:ffffffff"
    response = upload(Client(), document)
    assert "1 skipped because it is no longer on this site" in response.content.decode()
    # A file of nothing but such items brought nothing, and is not said to match this browser.
    document["items"] = document["items"][:1]
    alone = upload(Client(), document).content.decode()
    assert "1 skipped because it is no longer on this site" in alone
    assert "Nothing new" not in alone


def valid_document(client, demo) -> dict:
    answer(client, demo, right=True)
    return exported(client)


@pytest.mark.parametrize(
    ("spoil", "message"),
    [
        (lambda d: b"not json at all", "it is not JSON"),
        (lambda d: {"hello": "world"}, "not a LightMySky progress file"),
        (lambda d: [d], "not a LightMySky progress file (version 1, 2 or 3"),
        (lambda d: d | {"items": [1]}, "changed after this site exported it: Item 1 is not an"),
        (lambda d: d | {"version": 4}, "not a LightMySky progress file"),
        (lambda d: d["items"][0].update(stability=-1) or d, "“stability” must be a number"),
        (lambda d: d["items"][0].update(difficulty=11) or d, "“difficulty” must be a number"),
        (lambda d: d["items"][0].update(state="asleep") or d, "“state” must be learning"),
        (lambda d: d["items"][0].update(evidence=[]) or d, "“evidence” must be unlit, kindled"),
        (lambda d: d["items"][0].update(evidence={}) or d, "“evidence” must be unlit, kindled"),
        (
            lambda d: d["items"][0].update(kind="flashcard") or d,
            "That file was changed after this site exported it: Item 1: “kind” must be",
        ),
        (lambda d: d["items"][0].update(lesson="<script>") or d, "“lesson” is not in the expected"),
        (lambda d: d["items"][0]["reviews"][0].update(rating=5) or d, "“rating” must be a whole"),
        (
            lambda d: d["items"][0]["reviews"][0].update(rating=True) or d,
            "“rating” must be a whole",
        ),
        (
            lambda d: d["items"][0]["reviews"][0].update(reviewed_at="2100-01-01T00:00:00Z") or d,
            "“reviewed_at” is in the future",
        ),
        (
            lambda d: d["items"][0]["reviews"][0].update(reviewed_at="yesterday") or d,
            "must be a date and time",
        ),
        (lambda d: d["items"][0]["reviews"][0].update(correct="yes") or d, "“correct” must be"),
        (lambda d: d | {"items": d["items"] * 2}, "names the same item twice"),
    ],
)
def test_a_bad_file_gets_a_clear_message_and_changes_nothing(client, demo, spoil, message):
    document = spoil(valid_document(client, demo))
    before = (Learner.objects.count(), Review.objects.count(), Memory.objects.count())
    fresh = Client()
    response = upload(fresh, document)
    assert response.status_code == 400
    html = response.content.decode()
    assert message in html, re.findall(r'class="form-error"[^>]*>([^<]*)', html)
    assert "Nothing was changed." in html
    assert (Learner.objects.count(), Review.objects.count(), Memory.objects.count()) == before


def test_an_import_without_a_file_is_refused(client, db):
    response = client.post("/progress/import", {})
    assert response.status_code == 400
    assert "Choose a progress file" in response.content.decode()


def test_forget_needs_confirmation(client, demo):
    answer(client, demo, right=True)
    response = client.post("/progress/forget", {})
    assert response.status_code == 400
    assert "tick the box" in response.content.decode()
    assert Learner.objects.count() == 1


def test_forget_leaves_nothing(client, demo):
    finish_round(client, demo, [True] * 8)
    client.post("/progress/transfer")
    response = client.post("/progress/forget", {"confirm": "yes"})
    assert response.status_code == 302
    assert response["Location"] == "/progress?forgotten=1"
    for model in (Learner, Memory, Review, Round, TransferCode, Session):
        assert model.objects.count() == 0, model
    html = client.get("/progress?forgotten=1").content.decode()
    assert "Everything stored for this browser was erased." in html
    assert exported(client)["items"] == []


def test_forgetting_progress_moved_to_another_device_says_that_device_lost_it_too(demo):
    """The form warns that both devices lose it; the page after said only "this browser"
    (outside learner review)."""
    phone, laptop = Client(), Client()
    finish_round(phone, demo, [True] * 8)
    code = make_code(phone)
    assert laptop.post("/progress/adopt", {"code": code}).status_code == 302
    response = laptop.post("/progress/forget", {"confirm": "yes"})
    html = laptop.get(response["Location"]).content.decode()
    assert (
        "Everything stored for this browser was erased, and with it the progress on every other "
        "device that shared it through a one-time code."
    ) in html
    assert exported(phone)["items"] == []


def make_code(client) -> str:
    response = client.post("/progress/transfer")
    assert response.status_code == 200
    assert "<svg" in response.content.decode()  # the QR code, drawn on the server
    return response.context["transfer_code"]


def test_a_transfer_code_moves_progress_to_another_browser(client, demo):
    finish_round(client, demo, [True] * 8)
    code = make_code(client)
    assert re.fullmatch(r"[A-Z2-9]{4}-[A-Z2-9]{4}", code)
    phone = Client()
    answer(phone, demo, right=False)  # the phone's own answer joins the adopted progress
    response = phone.post("/progress/adopt", {"code": code.lower().replace("-", " ")})
    assert response.status_code == 302
    assert phone.session["learner"] == client.session["learner"]
    assert Learner.objects.count() == 1
    assert Review.objects.count() == 9
    # The phone's later miss of question 1 is the newer state: that star is missed.
    html = phone.get("/sky").content.decode()
    assert "<strong>0 lit · 7 kindled</strong> · 0 due" in html and "0 due and 1 missed" in html


def test_a_transfer_code_works_once(client, demo):
    answer(client, demo, right=True)
    code = make_code(client)
    assert Client().post("/progress/adopt", {"code": code}).status_code == 302
    response = Client().post("/progress/adopt", {"code": code})
    assert response.status_code == 400
    html = response.content.decode()
    assert "already used, replaced by a newer code, or older than 24 hours" in html
    # It does not then promise to bring the progress; it says what to do instead.
    assert "will carry the progress" not in html and "make a new one" in html


def test_the_code_pages_address_asked_for_leads_to_the_button_that_makes_one(client, demo):
    """A reload or a link to it cannot show the code again (only its hash is kept)."""
    answer(client, demo, right=True)
    response = client.get("/progress/transfer")
    assert response.status_code == 302 and response["Location"] == "/progress#move-title"
    assert "Make a one-time code" in client.get(response["Location"]).content.decode()
    assert TransferCode.objects.count() == 0  # a GET makes no code


def test_a_code_made_before_a_key_rotation_works_while_the_old_key_is_a_fallback(
    client, demo, settings
):
    answer(client, demo, right=True)
    code = make_code(client)
    # The rotation of docs/deploy.md: a new SECRET_KEY, the old one in SECRET_KEY_FALLBACKS.
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = "new-" + "k" * 60, [settings.SECRET_KEY]
    assert Client().post("/progress/adopt", {"code": code}).status_code == 302


def test_a_code_made_before_a_key_rotation_ends_with_its_fallback(client, demo, settings):
    answer(client, demo, right=True)
    code = make_code(client)
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = "new-" + "k" * 60, []
    response = Client().post("/progress/adopt", {"code": code})
    assert response.status_code == 400
    assert "That code does not work" in response.content.decode()


def test_a_transfer_code_expires_after_24_hours(client, demo):
    answer(client, demo, right=True)
    code = make_code(client)
    with time_machine.travel(timezone.now() + timedelta(hours=24, seconds=1), tick=False):
        response = Client().post("/progress/adopt", {"code": code})
    assert response.status_code == 400
    with time_machine.travel(timezone.now() + timedelta(hours=23), tick=False):
        assert Client().post("/progress/adopt", {"code": code}).status_code == 302


def test_a_new_code_replaces_the_old_one_and_the_code_page_says_so(client, demo):
    answer(client, demo, right=True)
    first = make_code(client)
    page = client.post("/progress/transfer")
    second = page.context["transfer_code"]
    assert (
        "It works once, within 24 hours, and only until you make another code: reloading "
        "this page makes another, so keep it open until the other device has used it."
        in page.content.decode()
    )
    # The first code's QR code, scanned: it says at once that the code no longer works.
    scanned = Client().get(f"/progress/adopt?code={first}")
    assert scanned.status_code == 400
    assert "replaced by a newer code" in scanned.content.decode()
    assert "will carry the progress" not in scanned.content.decode()
    assert Client().post("/progress/adopt", {"code": first}).status_code == 400
    assert Client().post("/progress/adopt", {"code": second}).status_code == 302


def test_a_code_scanned_where_its_progress_already_is_says_so(client, demo):
    answer(client, demo, right=True)
    code = make_code(client)
    html = client.get(f"/progress/adopt?code={code}").content.decode()
    assert "This browser already carries this progress" in html
    assert "Use the code on the other device." in html and "no longer works" not in html
    assert "joins it" not in html and "Yes, bring it here" not in html


def test_a_code_entered_where_it_was_made_is_left_for_the_other_device(client, demo):
    """It was spent, and erasing this browser's progress then said another device had shared
    it (second review of stop 69)."""
    answer(client, demo, right=True)
    code = make_code(client)
    entered = client.post("/progress/adopt", {"code": code})
    assert entered.status_code == 200
    assert "This browser already carries this progress" in entered.text
    assert "Use the code on the other device." in entered.text
    forgotten = client.post("/progress/forget", {"confirm": "yes"})
    assert forgotten["Location"] == "/progress?forgotten=1"


def test_a_code_scanned_again_where_it_was_used_says_the_progress_is_here(client, demo):
    answer(client, demo, right=True)
    code = make_code(client)
    other = Client()
    answer(other, demo, right=False)
    scanned = f"/progress/adopt?code={code}"
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', other.get(scanned).text)[1]
    assert (
        other.post("/progress/adopt", {"code": code, "csrfmiddlewaretoken": token}).status_code
        == 302
    )
    again = other.get(scanned)  # the same QR code, opened once more in the browser it moved to
    assert again.status_code == 200
    assert "This browser already carries this progress" in again.text
    assert "The code itself no longer works" in again.text  # not "use it on the other device"
    assert "Use the code on the other device" not in again.text
    assert "joins it" not in again.text and "does not work" not in again.text
    # Anywhere else the used code is refused as before.
    assert Client().get(scanned).status_code == 400


def test_making_a_code_lands_on_the_code_and_its_qr_code(client, demo):
    answer(client, demo, right=True)
    response = client.post("/progress/transfer")
    html = response.content.decode()
    main = html[html.index("<main") :]
    code = response.context["transfer_code"]
    # The page is the code: its heading, the code, then the QR code, before any other text.
    assert main.index("Your one-time code</h1>") < main.index(code) < main.index("<svg")
    assert main.index("<svg") < main.index("It works once, within 24 hours")
    assert "Export" not in main and "Forget everything" not in main
    assert response["Cache-Control"].startswith("max-age=0")  # never kept by a cache


def test_a_scanned_code_asks_one_question_before_adopting(client, demo):
    answer(client, demo, right=True)
    code = make_code(client)
    other = Client()
    answer(other, demo, right=False)
    response = other.get(f"/progress/adopt?code={code}")
    html = response.content.decode()
    assert response.status_code == 200
    assert "Bring your progress here?</h1>" in html
    assert f'<input type="hidden" name="code" value="{code.replace("-", "")}">' in html
    assert f'<strong class="code-inline">{code}</strong>' in html
    assert "What you have answered in this browser (1 answer) joins it." in html
    assert "Yes, bring it here" in html and "No, keep this browser as it is" in html
    assert Learner.objects.count() == 2  # nothing adopted by looking
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)[1]
    adopted = other.post(
        "/progress/adopt", {"code": code.replace("-", ""), "csrfmiddlewaretoken": token}
    )
    assert adopted["Location"] == "/progress?adopted=1"
    assert other.session["learner"] == client.session["learner"]


def test_a_scanned_code_that_no_longer_works_says_so_and_asks_for_another(client, demo):
    answer(client, demo, right=True)
    code = make_code(client)
    assert Client().post("/progress/adopt", {"code": code}).status_code == 302
    response = Client().post("/progress/adopt", {"code": code})
    html = response.content.decode()
    assert response.status_code == 400 and "Bring your progress here?</h1>" in html
    assert 'role="alert" id="adopt-error">That code does not work' in html
    assert 'aria-invalid="true"' in html and 'name="code" value="' in html  # to type again


@pytest.mark.parametrize("code", ["", "ABC", "ZZZZ-ZZZZ"])
def test_a_bad_code_is_refused_clearly(client, demo, code):
    response = client.post("/progress/adopt", {"code": code})
    assert response.status_code == 400
    assert Learner.objects.count() == 0


def test_no_progress_means_no_code(client, db):
    response = client.post("/progress/transfer")
    assert response.status_code == 400
    assert "no progress in this browser to move" in response.content.decode()


def test_stored_codes_are_hashed(client, demo):
    answer(client, demo, right=True)
    code = make_code(client)
    stored = TransferCode.objects.get().code_hash
    assert code.replace("-", "") not in stored and len(stored) == 64


def test_prune_keeps_transfer_working_for_active_learners(client, demo):
    from django.core.management import call_command

    answer(client, demo, right=True)
    code = make_code(client)
    call_command("prune_learners", stdout=io.StringIO())
    assert Client().post("/progress/adopt", {"code": code}).status_code == 302
