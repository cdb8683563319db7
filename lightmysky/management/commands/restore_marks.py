"""What bin/restore carries from the live database into the copy it swaps in.

A restore takes the database back in time, but not what lives outside it: sessions in the Redis
of CACHE_URL name their learner by id, and every app process keeps pages under the content
version number. If the restored copy handed out a learner id or a version number again, a browser
whose session names the old learner would read and write the new learner's progress, and a
process would serve a page of content the restore removed. So the copy's next learner id and its
content version are raised above the live database's before the swap, by MARGIN: the live site
keeps running while the copy is checked, and may hand out a few more in the seconds before the
swap.
"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction

from lessons.models import ContentVersion
from practice.models import Learner

MARGIN = 10_000


class Command(BaseCommand):
    help = (
        "Print this database's high-water marks (the last learner id handed out, the content "
        "version) as JSON; with --raise-to, raise this database's marks above those given "
        "(bin/restore runs both)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--raise-to", help="marks printed by this command on another database")

    def handle(self, *args, **options):
        if options["raise_to"] is None:
            marks = {"learner_id": last_learner_id(), "content_version": ContentVersion.current()}
            self.stdout.write(json.dumps(marks))
            return
        try:
            marks = json.loads(options["raise_to"])
            learner_id, version = int(marks["learner_id"]), int(marks["content_version"])
        except (ValueError, TypeError, KeyError):
            raise CommandError("--raise-to takes the JSON this command prints.") from None
        with transaction.atomic():
            learner_id_raise_to(learner_id + MARGIN)
            number = max(version + MARGIN, ContentVersion.current() + 1)
            ContentVersion.objects.update_or_create(pk=1, defaults={"number": number})
        self.stdout.write(f"Learner ids go on after {last_learner_id()}; content version {number}.")


def last_learner_id() -> int:
    """The last learner id the database handed out (the learner may be gone since)."""
    table = Learner._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT pg_sequence_last_value(pg_get_serial_sequence(%s, 'id')::regclass)",
                [table],
            )
        else:
            cursor.execute("SELECT seq FROM sqlite_sequence WHERE name = %s", [table])
        row = cursor.fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def learner_id_raise_to(last: int) -> None:
    """Make the next learner id greater than `last`, and than any the database handed out."""
    if last <= last_learner_id():
        return
    table = Learner._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT setval(pg_get_serial_sequence(%s, 'id'), %s)", [table, last])
            return
        cursor.execute("UPDATE sqlite_sequence SET seq = %s WHERE name = %s", [last, table])
        if not cursor.rowcount:  # no learner was ever made in this database
            cursor.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (%s, %s)", [table, last])
