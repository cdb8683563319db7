from django.urls import path, re_path

from lessons import views
from lessons.models import PUBLIC_ID_PATTERN

app_name = "lessons"

LESSON_PATH = (
    rf"^learn/(?P<subject>[-\w]+)/(?:(?P<slug>[-\w]+?)-)?(?P<public_id>{PUBLIC_ID_PATTERN})"
)

urlpatterns = [
    path("", views.home, name="home"),
    path("index.md", views.home, {"markdown": True}, name="home_markdown"),
    path("search", views.search, name="search"),
    path("search.md", views.search, {"markdown": True}, name="search_markdown"),
    path("learn/<slug:subject>/", views.subject, name="subject"),
    path("learn/<slug:subject>.md", views.subject, {"markdown": True}, name="subject_markdown"),
    re_path(LESSON_PATH + r"$", views.lesson, name="lesson"),
    re_path(LESSON_PATH + r"\.md$", views.lesson, {"markdown": True}, name="lesson_markdown"),
    re_path(LESSON_PATH + r"/worksheet$", views.worksheet, name="worksheet"),
    re_path(LESSON_PATH + r"/report$", views.report, name="report"),
    path("w", views.worksheet_by_code, name="worksheet_by_code"),
    path("w/<str:code>", views.worksheet_by_code, name="worksheet_code"),
]
