from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from lessons.models import Lesson
from tests.conftest import SEED_PATH
from tests.factories import make_lesson
from tests.practice.helpers import answer

SECTIONS_IN_ORDER = [
    "<h1",
    "Training Across Many Devices: Data, Model and Pipeline Parallelism",
    "No account needed. Progress saves in this browser.",
    "Computing · Machine Learning · Ages 23 to 24",
    "What a learner can do afterwards",
    "· Read",
    '<h3 id="example-title">Try it together',
    "Tip",
    "Recap",
    "Take it off screen",
    "Print a worksheet",
    "Where it sits",
    "Learn first",
    "Optional connections",
    "This opens up",
    '<h2 id="practise-title">Then practise',
    "8 questions wait behind this lesson",
    "Training Across Many Devices: Data, Model and Pipeline Parallelism · Computing, ages 23 to 24"
    " · LightMySky",
]


def test_seed_lesson_is_served_at_its_seed_address_with_every_section_in_order(client, demo):
    response = client.get(SEED_PATH)
    assert response.status_code == 200
    html = response.content.decode()
    html = html[html.find("<main") :]
    positions = [html.find(text) for text in SECTIONS_IN_ORDER]
    assert -1 not in positions, [
        t for t, p in zip(SECTIONS_IN_ORDER, positions, strict=True) if p == -1
    ]
    assert positions == sorted(positions)


def test_seed_lesson_shows_objectives_worked_table_and_neighbours(client, demo):
    html = client.get(SEED_PATH).content.decode()
    for objective in demo.objective_list:
        assert f"<li>{objective}</li>" in html
    assert "<table>" in html and "<td>A1</td>" in html and "<td>B3</td>" in html
    needs_first = "/learn/computing/message-passing-and-asynchronous-work-mt_twcpO-945r"
    opens_up = (
        "/learn/computing/serving-a-model-batching-the-key-value-cache-and-quantisation-"
        "mt_Nv1-WLGIO4"
    )
    learn_first_part = html[html.find("Learn first") : html.find("Optional connections")]
    opens_up_part = html[html.find("This opens up") : html.find('id="practise-title"')]
    assert needs_first in learn_first_part
    assert opens_up in opens_up_part
    assert f'href="{SEED_PATH}/worksheet"' in html


def test_neighbours_link_back_to_the_seed_lesson(client, demo):
    before = client.get(
        "/learn/computing/message-passing-and-asynchronous-work-mt_twcpO-945r"
    ).content.decode()
    after = client.get(
        "/learn/computing/serving-a-model-batching-the-key-value-cache-and-quantisation-mt_Nv1-WLGIO4"
    ).content.decode()
    assert SEED_PATH in before[before.find("This opens up") :]
    assert SEED_PATH in after[after.find("Learn first") : after.find("Optional connections")]
    assert "Nothing; this is a starting point." in before


def test_a_starting_lesson_says_so(client, db):
    lesson = make_lesson()
    assert (
        "Nothing; this is a starting point."
        in client.get(lesson.get_absolute_url()).content.decode()
    )


@pytest.mark.parametrize(
    "wrong_path",
    [
        "/learn/computing/some-old-title-mt__e-JwIxHek",
        "/learn/music/training-across-many-devices-data-model-and-pipeline-parallelism-mt__e-JwIxHek",
        "/learn/computing/mt__e-JwIxHek",
    ],
)
def test_a_wrong_slug_or_subject_redirects_permanently_to_the_canonical_address(
    client, demo, wrong_path
):
    response = client.get(wrong_path)
    assert response.status_code == 301
    assert response["Location"] == SEED_PATH


def test_a_redirect_keeps_the_query_string(client, demo):
    response = client.get("/learn/computing/old-mt__e-JwIxHek?mode=agent")
    assert response["Location"] == SEED_PATH + "?mode=agent"


def test_an_unknown_id_is_a_404_in_the_sites_own_style(client, demo):
    response = client.get("/learn/computing/training-mt_XXXXXXXXXX")
    assert response.status_code == 404
    assert "This page is not in our sky" in response.content.decode()


def test_a_draft_is_hidden_from_learners_and_previewed_by_staff(client, db):
    draft = make_lesson(status=Lesson.Status.DRAFT)
    assert client.get(draft.get_absolute_url()).status_code == 404
    client.force_login(User.objects.create_user("editor", password="x", is_staff=True))
    response = client.get(draft.get_absolute_url())
    assert response.status_code == 200
    assert "Draft." in response.content.decode()


def test_reading_sets_no_cookie(client, demo):
    for path in ["/", "/learn/computing/", SEED_PATH, SEED_PATH + "/worksheet"]:
        response = client.get(path)
        assert response.status_code == 200
        assert not response.cookies, path


def test_lesson_page_query_count_does_not_grow_with_questions_or_links(
    client, db, django_assert_num_queries
):
    small = make_lesson(title="Small", slug="small", questions=2, flashcards=0)
    big = make_lesson(title="Big", slug="big", questions=8, flashcards=8)
    for n in range(6):
        other = make_lesson(title=f"Other {n}", slug=f"other-{n}", questions=0)
        big.needs_first.add(other)
        big.connections.add(other)
        other.needs_first.add(big)
    for lesson in (small, big):
        # A first (cold) visit: 1 the content version; 2 the lesson with its subject, area and
        # question count; 3 its neighbours; 4 its questions; 5 its questions and flashcards,
        # the stars of its constellation. Later visits by anyone without a session: 1 query.
        with django_assert_num_queries(5):
            assert client.get(lesson.get_absolute_url()).status_code == 200


def test_drafts_are_not_linked_as_neighbours(client, db):
    lesson = make_lesson()
    draft = make_lesson(title="Secret draft", slug="secret", status=Lesson.Status.DRAFT)
    lesson.connections.add(draft)
    assert "Secret draft" not in client.get(lesson.get_absolute_url()).content.decode()


def test_a_lesson_with_a_video_has_a_watch_section_with_its_transcript(client, db):
    lesson = make_lesson(video="videos/stars.mp4", transcript="We look **up**.")
    html = client.get(lesson.get_absolute_url()).content.decode()
    assert "· Watch" in html
    assert '<video controls preload="metadata" src="/media/videos/stars.mp4"' in html
    assert "We look <strong>up</strong>." in html
    assert (
        "· Watch"
        not in client.get(
            make_lesson(slug="plain", title="Plain").get_absolute_url()
        ).content.decode()
    )


def test_a_lesson_begun_offers_to_practise_its_questions_not_to_start_them(client, demo):
    assert "Start the 8 questions" in client.get(SEED_PATH).content.decode()
    answer(client, demo, right=True)
    html = client.get(SEED_PATH).content.decode()
    assert "Practise the 8 questions" in html and "Start the" not in html
    assert "You have begun this lesson: its 8 questions are here to practise" in html
    assert "wait behind this lesson" not in html
