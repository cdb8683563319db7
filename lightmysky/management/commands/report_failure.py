"""Tell the operator that a periodic job failed: run by systemd's OnFailure= (docs/deploy.md)."""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.mail import mail_admins
from django.core.management.base import BaseCommand

logger = logging.getLogger("lightmysky.jobs")


class Command(BaseCommand):
    help = "Log (and mail to ADMINS, if set) that the systemd unit UNIT failed."

    def add_arguments(self, parser) -> None:
        parser.add_argument("unit", help="the failed unit, e.g. lightmysky-backup")

    def handle(self, *args, unit: str, **options) -> None:
        message = f"{unit} failed: see `journalctl -u {unit}` and `systemctl status {unit}`."
        logger.error(message, extra={"unit": unit})
        if settings.ADMINS:
            mail_admins(f"{unit} failed", message, fail_silently=False)
            self.stdout.write(f"Mailed {', '.join(settings.ADMINS)}: {message}")
