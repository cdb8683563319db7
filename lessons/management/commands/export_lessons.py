from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand

from lessons.services import lessons_export_directory


class Command(BaseCommand):
    help = "Write every lesson to DIR as one Markdown file per lesson (<public id>.md)."

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path)

    def handle(self, *args, directory: Path, **options):
        count = lessons_export_directory(directory=directory)
        self.stdout.write(f"Wrote {count} lesson file(s) to {directory}.")
