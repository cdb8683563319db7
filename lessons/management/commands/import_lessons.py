from __future__ import annotations

import sys
from pathlib import Path

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from lessons.services import LoadResult, lesson_files_write_keys, lessons_import_directory

# What the import asks before it touches learners' data, and the flags that answer for scripts.
QUESTIONS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "memories": (
        "Reset learners' memory of what is listed above (asked again as new; their answers are "
        "kept), or keep it?",
        ("reset", "keep"),
        "--reset-memories or --keep-memories",
    ),
    "missing": (
        "Retire what is listed above (it leaves the lesson; learners' answers stay with it), or "
        "delete it with their answers?",
        ("retire", "delete"),
        "--allow-retire or --allow-delete",
    ),
    "unpublish": (
        "Set what is listed above back to draft all the same (it leaves learners' sky until "
        "it is published again)?",
        ("draft",),
        "--allow-unpublish",
    ),
}


class Command(BaseCommand):
    help = (
        "Create or update lessons from the Markdown files in DIR (the format is in "
        "docs/lesson-files.md). All or nothing: any problem changes nothing, and every problem "
        "is printed as `file:line: field: message`. Markdown that will not show as written is "
        "printed as `file:line: warning: field: message` and does not stop the import. --check "
        "prints what an import would change, and writes nothing. An import that would reset "
        "learners' memory, or retire or delete questions they answered, asks first (or takes "
        "the answer from the flags below)."
    )

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path)
        parser.add_argument(
            "--check",
            action="store_true",
            help="Print every problem and every change an import would make; write nothing.",
        )
        memories = parser.add_mutually_exclusive_group()
        memories.add_argument(
            "--reset-memories",
            action="store_const",
            const="reset",
            dest="memories",
            help="Reset learners' memory of questions whose right answer changes.",
        )
        memories.add_argument(
            "--keep-memories",
            action="store_const",
            const="keep",
            dest="memories",
            help="Keep learners' memory of questions whose right answer changes.",
        )
        missing = parser.add_mutually_exclusive_group()
        missing.add_argument(
            "--allow-retire",
            action="store_const",
            const="retire",
            dest="missing",
            help="Retire answered questions missing from their file (or replaced by a new one "
            "without a key): they leave the lesson, their answers stay with them.",
        )
        missing.add_argument(
            "--allow-delete",
            action="store_const",
            const="delete",
            dest="missing",
            help="Delete answered questions and flashcards missing from their file, with their "
            "answers.",
        )
        parser.add_argument(
            "--allow-unpublish",
            action="store_const",
            const="draft",
            dest="unpublish",
            help="Set published lessons that learners practise back to draft when their file "
            "says draft.",
        )
        parser.add_argument(
            "--no-input",
            action="store_true",
            help="Never ask in the terminal: refuse, with the plan, when an answer is needed.",
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
        answers = {key: options[key] for key in ("memories", "missing", "unpublish")}
        import_options = {
            "force": options["force"],
            "update_subjects": options["update_subjects"],
            "user_id": user_id,
        }
        result = self.run(directory, options["check"], answers, import_options)
        self.print_warnings(result)
        if options["check"]:
            self.print_plan(result, future=True)
            for kind, asked in result.asks.items():
                question, _, flags = QUESTIONS[kind]
                self.stdout.write(
                    f"An import will ask about {len(asked)} of these: {question} ({flags})"
                )
            self.print_subjects_hint(result)
            self.stdout.write(f"Check passed. {summary(result)} (nothing was written)")
            return
        if result.asks:
            if options["no_input"] or not sys.stdin.isatty():
                self.print_plan(result, future=True)
                needed = " and ".join(QUESTIONS[kind][2] for kind in result.asks)
                raise CommandError(
                    "Nothing was written: this import touches learners' data (above). Run it "
                    f"in a terminal to be asked, or answer with {needed}."
                )
            self.print_plan(result, future=True)
            for kind in result.asks:
                answers[kind] = self.ask(kind, result)
            result = self.run(directory, False, answers, import_options)
            if result.asks:  # the files changed in between: start again
                raise CommandError("The files changed while you answered; nothing was written.")
        self.print_plan(result, future=False)
        self.print_subjects_hint(result)
        self.stdout.write(summary(result))
        if result.assigned and options["write_keys"]:
            count = lesson_files_write_keys(directory=directory, assigned=result.assigned)
            self.stdout.write(f"Wrote {count} new key(s) back into the files.")
        elif result.assigned:
            self.stdout.write(
                "New keys were assigned (above): add them to the files, or import with "
                "--write-keys, so the next import matches these items by key."
            )

    def run(self, directory: Path, check: bool, answers: dict, options: dict) -> LoadResult:
        try:
            result, problems = lessons_import_directory(
                directory=directory, check=check, **answers, **options
            )
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from error
        if problems:
            count = len(problems)
            lines = [str(problem) for problem in problems]
            lines += [warning.as_warning() for warning in result.warnings]
            lines.append(f"{count} problem{'s' if count != 1 else ''} found; nothing was written.")
            raise CommandError("\n".join(lines))
        return result

    def print_warnings(self, result: LoadResult) -> None:
        for warning in result.warnings:
            self.stdout.write(warning.as_warning())
        if result.warnings:
            count = len(result.warnings)
            self.stdout.write(
                f"{count} warning{'s' if count != 1 else ''}: learners will not see that "
                "Markdown as written. Warnings do not stop an import."
            )

    def print_plan(self, result: LoadResult, *, future: bool) -> None:
        for line in result.plan_in_words(future=future):
            self.stdout.write(line)

    def print_subjects_hint(self, result: LoadResult) -> None:
        if result.kept_shared_texts:
            self.stdout.write(
                "To change them from the files instead, import with --update-subjects."
            )

    def ask(self, kind: str, result: LoadResult) -> str:
        question, options, _ = QUESTIONS[kind]
        asked = result.asks[kind]
        if kind == "missing" and result.asks_about_flashcards:
            question, options = (
                "Delete what is listed above with its answers? (A flashcard cannot be retired: "
                "to keep one, put it back in the file.)",
                ("delete",),
            )
            questions, cards = result.answered_left_out
            if questions:
                question += (
                    f" To retire the {'questions' if questions > 1 else 'question'} instead: "
                    f"cancel, put the {'flashcards' if cards > 1 else 'flashcard'} back in the "
                    "file, import and answer retire; then import again without "
                    f"{'them' if cards > 1 else 'it'}."
                )
        self.stdout.write("")
        for line in asked:
            self.stdout.write(f"  {line.where}: {line.future}")
        prompt = f"{question} [{'/'.join(options)}/cancel] "
        while True:
            self.stdout.write(prompt, ending="")
            self.stdout.flush()
            reply = sys.stdin.readline().strip().lower()
            if reply in options:
                return reply
            if len(options) == 1 and reply in ("y", "yes"):  # a yes-or-no question
                return options[0]
            if reply in ("", "cancel", "c", "n", "no"):
                raise CommandError("Cancelled; nothing was written.")
            self.stdout.write(f"Please answer {' or '.join(options)}, or cancel.")


def summary(result: LoadResult) -> str:
    return (
        f"Lessons: {result.created} created, {result.updated} updated, "
        f"{result.unchanged} unchanged."
    )
