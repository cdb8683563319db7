from django.db import migrations
from django.db.models import Count


def number_flashcards_apart(apps, schema_editor):
    """Flashcards added in the admin before positions were checked could share one, and a
    lesson file now refuses that: each such lesson's cards are numbered 1, 2, 3… in the order
    they were shown (position, then creation). Lessons whose cards differ already are left as
    they are. Nothing to undo: the old code reads any positions."""
    Flashcard = apps.get_model("lessons", "Flashcard")
    shared = (
        Flashcard.objects.values("lesson_id", "position")
        .annotate(cards=Count("pk"))
        .filter(cards__gt=1)
        .values_list("lesson_id", flat=True)
    )
    for lesson_id in set(shared):
        cards = Flashcard.objects.filter(lesson_id=lesson_id).order_by("position", "pk")
        for number, card in enumerate(cards, start=1):
            if card.position != number:
                Flashcard.objects.filter(pk=card.pk).update(position=number)


class Migration(migrations.Migration):
    dependencies = [
        ("lessons", "0016_question_retired_at"),
    ]

    operations = [
        migrations.RunPython(number_flashcards_apart, migrations.RunPython.noop),
    ]
