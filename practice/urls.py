from django.urls import path, re_path

from lessons.urls import LESSON_PATH
from practice import views

app_name = "practice"

urlpatterns = [
    re_path(LESSON_PATH + r"/practice$", views.practice_round, name="round"),
    re_path(LESSON_PATH + r"/flashcards$", views.flashcards, name="flashcards"),
    re_path(
        LESSON_PATH + r"/worksheet/answers$", views.worksheet_answers, name="worksheet_answers"
    ),
    path("review", views.review, name="review"),
    path("sky", views.sky_page, name="sky"),
    path("sky/table", views.sky_page, {"table": True}, name="sky_table"),
    path("sky/words", views.star_words, name="words"),
    path("sky/words.md", views.star_words, {"markdown": True}, name="words_markdown"),
    path("progress", views.progress, name="progress"),
    path("progress/export", views.progress_export, name="export"),
    path("progress/import", views.progress_import, name="import"),
    path("progress/forget", views.progress_forget, name="forget"),
    path("progress/transfer", views.progress_transfer, name="transfer"),
    path("progress/adopt", views.progress_adopt, name="adopt"),
]
