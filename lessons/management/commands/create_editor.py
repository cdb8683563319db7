from __future__ import annotations

from django.contrib.auth.models import Group, User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse


class Command(BaseCommand):
    help = (
        "Create an editor: a staff account in the Editors group, who can write lessons and "
        "triage problem reports in /admin/ but not manage accounts. Asks for a password."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--email", default="")
        parser.add_argument(
            "--password", help="Set this password instead of asking (for scripts and tests)."
        )

    def handle(self, *args, username: str, email: str, password: str | None, **options):
        if User.objects.filter(username=username).exists():
            raise CommandError(f"There is already an account named {username!r}.")
        group = Group.objects.filter(name="Editors").first()
        if group is None:
            raise CommandError("The Editors group is missing: run `manage.py migrate` first.")
        if password is None:
            password = self.ask_for_password(username, email)
        elif problem := password_problem(password, username, email):
            raise CommandError(f"{problem} Nothing was created.")
        user = User.objects.create_user(username, email=email, password=password, is_staff=True)
        user.groups.add(group)
        sign_in = reverse("admin:index")
        self.stdout.write(f"Editor {username!r} created; they can sign in at {sign_in}.")

    def ask_for_password(self, username: str, email: str) -> str:
        """Ask until a password will do, saying what is wrong with each that does not."""
        from getpass import getpass

        while True:
            password = getpass(f"Password for {username}: ")
            if password != getpass("The same password again: "):
                self.stderr.write("The two passwords differ; try again.")
            elif problem := password_problem(password, username, email):
                self.stderr.write(f"{problem} Try again.")
            else:
                return password


def password_problem(password: str, username: str, email: str) -> str | None:
    """What is wrong with a password for this account, if anything."""
    if len(password) < 10:
        return "Use a password of at least 10 characters."
    try:
        validate_password(password, User(username=username, email=email))
    except ValidationError as error:
        return " ".join(error.messages)
    return None
