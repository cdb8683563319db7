"""Lesson videos: a real video's size is accepted in the admin, with a form error beyond the
limit; every learner-facing address keeps its small limit."""

from __future__ import annotations

from django.core.files.uploadedfile import SimpleUploadedFile

from lessons.models import Lesson
from tests.lessons.test_admin import change_page_data

MB = 1024 * 1024


def test_a_video_over_the_limit_gets_a_form_error_and_nothing_is_saved(
    editor_client,  # noqa: F811
    demo,
    settings,
    tmp_path,
):
    settings.MEDIA_ROOT = tmp_path
    settings.LESSON_VIDEO_MAX_BYTES = 2 * MB
    data = change_page_data(editor_client, demo)
    data["transcript"] = "We look up."
    data["video"] = SimpleUploadedFile("stars.mp4", b"\0" * (3 * MB), content_type="video/mp4")
    response = editor_client.post(f"/admin/lessons/lesson/{demo.pk}/change/", data)
    assert response.status_code == 200
    html = response.content.decode()
    assert "This video is 3 MB; a lesson video may be at most 2 MB." in html
    assert not Lesson.objects.get(pk=demo.pk).video
    assert not list(tmp_path.rglob("*.mp4"))


def test_a_video_within_the_limit_is_saved(editor_client, demo, settings, tmp_path):  # noqa: F811
    settings.MEDIA_ROOT = tmp_path
    data = change_page_data(editor_client, demo)
    data["transcript"] = "We look up."
    # Larger than any learner-facing request may be (MAX_REQUEST_BYTES, 6 MB).
    data["video"] = SimpleUploadedFile("stars.mp4", b"\0" * (7 * MB), content_type="video/mp4")
    response = editor_client.post(f"/admin/lessons/lesson/{demo.pk}/change/", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    video = Lesson.objects.get(pk=demo.pk).video
    assert video.name.startswith("videos/stars") and video.size == 7 * MB


def test_learner_facing_addresses_and_the_signed_out_admin_keep_the_small_limit(
    client,
    editor_client,  # noqa: F811
    db,
    settings,
):
    body = b"x" * (settings.MAX_REQUEST_BYTES + 1)
    # Before signing in, the admin's large limit is not there to spend: a stranger cannot make
    # the site read hundreds of megabytes at its sign-in page.
    for path in ("/progress/import", "/api/v1/check", "/", "/admin/login/", "/admin/lessons/"):
        response = client.generic("POST", path, body, content_type="application/octet-stream")
        assert response.status_code == 413, path
    admin = editor_client.generic(
        "POST", "/admin/lessons/lesson/add/", body, content_type="application/octet-stream"
    )
    assert admin.status_code != 413
    settings.ADMIN_MAX_REQUEST_BYTES = 10 * MB
    too_large = b"x" * (10 * MB + 1)
    response = editor_client.generic(
        "POST", "/admin/lessons/", too_large, content_type="text/plain"
    )
    assert response.status_code == 413
