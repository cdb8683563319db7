import secrets

from django.db import migrations, models


def give_choices_ids(apps, schema_editor):
    Question = apps.get_model("lessons", "Question")
    for question in Question.objects.only("choices").iterator(chunk_size=500):
        taken = {c.get("id") for c in question.choices}
        if None not in taken and len(taken) == len(question.choices):
            continue
        seen = set()
        for choice in question.choices:
            if not choice.get("id") or choice["id"] in seen:
                while (choice_id := secrets.token_hex(3)) in taken:
                    pass
                choice["id"] = choice_id
                taken.add(choice_id)
            seen.add(choice["id"])
        question.save(update_fields=["choices"])


class Migration(migrations.Migration):
    dependencies = [
        ("lessons", "0009_question_keep_choice_order"),
    ]

    operations = [
        migrations.AlterField(
            model_name="question",
            name="choices",
            field=models.JSONField(
                default=list,
                help_text='A list of {"id", "text", "correct", "explanation"}: the id is what '
                "learners' answers record, the explanation says why a wrong choice is wrong.",
            ),
        ),
        migrations.RunPython(give_choices_ids, migrations.RunPython.noop, elidable=True),
    ]
