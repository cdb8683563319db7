from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from lessons.services import lessons_import_directory


class Command(BaseCommand):
    help = (
        "Create or update lessons by public id from the Markdown files in DIR (as export_lessons "
        "writes them). All or nothing: one bad file changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path)

    def handle(self, *args, directory: Path, **options):
        if not directory.is_dir():
            raise CommandError(f"{directory} is not a folder.")
        try:
            result = lessons_import_directory(directory=directory)
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from error
        self.stdout.write(
            f"Lessons: {result.created} created, {result.updated} updated, "
            f"{result.unchanged} unchanged."
        )
