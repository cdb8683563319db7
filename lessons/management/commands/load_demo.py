from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from lessons.models import Lesson
from lessons.services import lessons_import_directory

DEMO_DIRECTORY = Path(settings.BASE_DIR) / "fixtures" / "demo"


class Command(BaseCommand):
    help = "Load the demo lessons (the seed lesson and its neighbours). Safe to run again."

    def add_arguments(self, parser):
        parser.add_argument(
            "--if-empty", action="store_true", help="Do nothing if any lesson exists."
        )

    def handle(self, *args, **options):
        if options["if_empty"] and Lesson.objects.exists():
            self.stdout.write("Lessons already exist; demo content not loaded.")
            return
        try:
            result, problems = lessons_import_directory(directory=DEMO_DIRECTORY)
        except ValidationError as error:
            raise CommandError(f"The demo content could not be loaded: {error}") from error
        if problems:
            details = "\n".join(str(problem) for problem in problems)
            raise CommandError(f"The demo content could not be loaded:\n{details}")
        self.stdout.write(
            f"Demo content: {result.created} lessons created, {result.updated} updated, "
            f"{result.unchanged} unchanged."
        )
