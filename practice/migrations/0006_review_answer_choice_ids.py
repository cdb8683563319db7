"""Answers stored as letters (A for the first choice) become the choices' identities, so that
reordering or shuffling choices can no longer relabel what a learner answered."""

import string

from django.db import migrations


def letters_to_choice_ids(apps, schema_editor):
    Question = apps.get_model("lessons", "Question")
    Review = apps.get_model("practice", "Review")
    answered = Review.objects.filter(question__isnull=False).exclude(answer="")
    for question in Question.objects.filter(pk__in=answered.values("question")).only("choices"):
        ids = {string.ascii_uppercase[i]: c["id"] for i, c in enumerate(question.choices)}
        for answer in set(answered.filter(question=question).values_list("answer", flat=True)):
            letters = answer.split(",")
            if all(letter in ids for letter in letters):
                as_ids = ",".join(sorted(ids[letter] for letter in letters))
                answered.filter(question=question, answer=answer).update(answer=as_ids)


def choice_ids_to_letters(apps, schema_editor):
    Question = apps.get_model("lessons", "Question")
    Review = apps.get_model("practice", "Review")
    answered = Review.objects.filter(question__isnull=False).exclude(answer="")
    for question in Question.objects.filter(pk__in=answered.values("question")).only("choices"):
        letters = {c["id"]: string.ascii_uppercase[i] for i, c in enumerate(question.choices)}
        for answer in set(answered.filter(question=question).values_list("answer", flat=True)):
            ids = answer.split(",")
            if all(choice_id in letters for choice_id in ids):
                as_letters = ",".join(sorted(letters[choice_id] for choice_id in ids))
                answered.filter(question=question, answer=answer).update(answer=as_letters)


class Migration(migrations.Migration):
    dependencies = [
        ("lessons", "0010_choice_ids"),
        ("practice", "0005_round_question_order"),
    ]

    operations = [
        migrations.RunPython(letters_to_choice_ids, choice_ids_to_letters, elidable=True),
    ]
