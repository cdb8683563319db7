"""Render stored Markdown again: headings now start one level lower (h4) than before."""

from django.db import migrations

from lightmysky.lib.markdown import render_markdown

LESSON_TEXTS = ["body", "example", "tip", "recap", "transcript"]


def rerender(apps, schema_editor):
    Lesson = apps.get_model("lessons", "Lesson")
    Question = apps.get_model("lessons", "Question")
    for lesson in Lesson.objects.all():
        for name in LESSON_TEXTS:
            setattr(lesson, f"{name}_html", render_markdown(getattr(lesson, name)))
        lesson.save(update_fields=[f"{name}_html" for name in LESSON_TEXTS])
    for question in Question.objects.all():
        question.explanation_html = render_markdown(question.explanation)
        question.save(update_fields=["explanation_html"])


class Migration(migrations.Migration):
    dependencies = [("lessons", "0005_video_file_types")]

    operations = [migrations.RunPython(rerender, migrations.RunPython.noop)]
