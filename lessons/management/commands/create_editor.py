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
            from getpass import getpass

            password = getpass(f"Password for {username}: ")
            if password != getpass("The same password again: "):
                raise CommandError("The two passwords differ; nothing was created.")
        if len(password) < 10:
            raise CommandError("Use a password of at least 10 characters; nothing was created.")
        try:
            validate_password(password, User(username=username, email=email))
        except ValidationError as error:
            raise CommandError(" ".join(error.messages) + " Nothing was created.") from None
        user = User.objects.create_user(username, email=email, password=password, is_staff=True)
        user.groups.add(group)
        sign_in = reverse("admin:index")
        self.stdout.write(f"Editor {username!r} created; they can sign in at {sign_in}.")
