from __future__ import annotations

from pathlib import Path

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from lessons.services import lesson_files_write_keys, lessons_import_directory


class Command(BaseCommand):
    help = (
        "Create or update lessons from the Markdown files in DIR (the format is in "
        "docs/lesson-files.md). All or nothing: any problem changes nothing, and every problem "
        "is printed as `file:line: field: message`. Markdown that will not show as written is "
        "printed as `file:line: warning: field: message` and does not stop the import. --check "
        "only reports what would happen."
    )

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path)
        parser.add_argument(
            "--check", action="store_true", help="Report every problem and change; write nothing."
        )
        parser.add_argument(
            "--allow-delete",
            action="store_true",
            help="Delete questions and flashcards missing from their file even when learners "
            "have answered them (their answers go too).",
        )
        parser.add_argument(
            "--force",
            action="store_true",
            help="Import lessons changed in the admin since their file was exported, undoing "
            "those changes.",
        )
        parser.add_argument(
            "--update-subjects",
            action="store_true",
            help="Let files set the name and description of existing subjects and areas.",
        )
        parser.add_argument(
            "--keep-memories",
            action="store_true",
            help="Keep learners' memory of questions whose right answer changes.",
        )
        parser.add_argument(
            "--write-keys",
            action="store_true",
            help="Write the keys given to new questions, flashcards and lessons back into "
            "their files.",
        )
        parser.add_argument(
            "--user",
            help="The editor's username the admin's history names (default: lesson-files).",
        )

    def handle(self, *args, directory: Path, **options):
        if not directory.is_dir():
            raise CommandError(f"{directory} is not a folder.")
        user_id = None
        if options["user"]:
            user = User.objects.filter(username=options["user"], is_staff=True).first()
            if user is None:
                raise CommandError(f"There is no staff user {options['user']!r}.")
            user_id = user.pk
        try:
            result, problems = lessons_import_directory(
                directory=directory,
                check=options["check"],
                allow_delete=options["allow_delete"],
                force=options["force"],
                update_subjects=options["update_subjects"],
                keep_memories=options["keep_memories"],
                user_id=user_id,
            )
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from error
        if problems:
            count = len(problems)
            lines = [str(problem) for problem in problems]
            lines += [warning.as_warning() for warning in result.warnings]
            lines.append(f"{count} problem{'s' if count != 1 else ''} found; nothing was written.")
            raise CommandError("\n".join(lines))
        for note in result.notes:
            self.stdout.write(note)
        for warning in result.warnings:
            self.stdout.write(warning.as_warning())
        if result.warnings:
            count = len(result.warnings)
            self.stdout.write(
                f"{count} warning{'s' if count != 1 else ''}: learners will not see that "
                "Markdown as written. Warnings do not stop an import."
            )
        summary = (
            f"Lessons: {result.created} created, {result.updated} updated, "
            f"{result.unchanged} unchanged."
        )
        if options["check"]:
            self.stdout.write(f"Check passed. {summary} (nothing was written)")
            return
        self.stdout.write(summary)
        if result.assigned and options["write_keys"]:
            count = lesson_files_write_keys(directory=directory, assigned=result.assigned)
            self.stdout.write(f"Wrote {count} new key(s) back into the files.")
        elif result.assigned:
            self.stdout.write(
                "New keys were assigned (above): add them to the files, or import with "
                "--write-keys, so the next import matches these items by key."
            )
