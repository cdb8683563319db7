"""A failed periodic job reaches the operator: systemd's OnFailure= runs report_failure."""

from __future__ import annotations

import io
import logging

from django.core import mail
from django.core.management import call_command


def test_a_failed_job_is_logged_as_an_error(db, caplog, settings):
    settings.ADMINS = []
    with caplog.at_level(logging.ERROR, logger="lightmysky.jobs"):
        call_command("report_failure", "lightmysky-backup", stdout=io.StringIO())
    assert caplog.records[0].levelno == logging.ERROR
    assert "lightmysky-backup failed" in caplog.records[0].getMessage()
    assert mail.outbox == []


def test_a_failed_job_is_mailed_to_the_admins(db, settings):
    settings.ADMINS = ["ops@example.org"]
    out = io.StringIO()
    call_command("report_failure", "lightmysky-housekeeping", stdout=out)
    assert [m.to for m in mail.outbox] == [["ops@example.org"]]
    assert "lightmysky-housekeeping failed" in mail.outbox[0].subject
    assert "journalctl -u lightmysky-housekeeping" in mail.outbox[0].body
