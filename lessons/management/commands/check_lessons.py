from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from lessons.files import LessonFileError, markdown_to_lesson, read_lesson_file
from lessons.item_checks import lesson_item_warnings
from lessons.models import Question

UNREADABLE = 2  # a different exit status from "warnings found", so CI can tell them apart


class Command(BaseCommand):
    help = (
        "Check the lesson files (*.md) in DIR for item-writing cues, such as a right answer "
        "that is always the longest choice, and print each as `file: question N: message`. "
        "Reads the files only; the database is not touched. Exits 1 when there are warnings, "
        "2 when a file cannot be read."
    )

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path)

    def handle(self, *args, directory: Path, **options):
        if not directory.is_dir():
            raise CommandError(f"{directory} is not a folder.", returncode=UNREADABLE)
        paths = sorted(directory.glob("*.md"))
        if not paths:
            raise CommandError(f"{directory} holds no lesson files (*.md).", returncode=UNREADABLE)
        count = 0
        for path in paths:
            for position, warning in lesson_item_warnings(questions_in(path)):
                where = f"question {position}: " if position else ""
                self.stdout.write(f"{path.name}: {where}{warning}")
                count += 1
        checked = f"Checked {len(paths)} lesson file{'s' if len(paths) != 1 else ''}"
        if count:
            raise CommandError(f"{checked}: {count} warning{'s' if count != 1 else ''}.")
        self.stdout.write(f"{checked}: no warnings.")


def questions_in(path: Path) -> list[Question]:
    """The questions of one lesson file, as unsaved questions the checks can read."""
    try:
        lesson = markdown_to_lesson(read_lesson_file(path), source=path.name)
    except LessonFileError as error:
        raise CommandError(str(error), returncode=UNREADABLE) from error
    except OSError as error:
        raise CommandError(f"{path.name} cannot be read: {error}", returncode=UNREADABLE) from error
    return [
        Question(
            position=item["position"],
            prompt=item["prompt"],
            choices=item["choices"],
            keep_choice_order=item["keep_choice_order"],
        )
        for item in lesson["questions"]
    ]
