from __future__ import annotations

from django.core.management.base import BaseCommand

from lessons import search


class Command(BaseCommand):
    help = (
        "Rebuild the lesson search index from the published lessons. Saves through the admin "
        "or import_lessons keep it current; run this after a bulk load that bypassed them."
    )

    def handle(self, *args, **options):
        indexed = search.rebuild()
        self.stdout.write(f"Search index rebuilt: {indexed} published lessons.")
