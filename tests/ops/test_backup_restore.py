"""bin/backup and bin/restore round trip, through the scripts, on the suite's database kind.

On PostgreSQL the backup is a pg_dump and the restore swaps databases by name; on SQLite it is
SQLite's online backup written back into the live file. Both restore the media too. A restore
shows the backup beside the live database and will not lose learners or answers unasked
(operators' review M3), and one that stops leaves no scratch database behind (P3).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from lightmysky.release import release
from tests.ops.servers import ROOT, gunicorn, manage, production_env

EDITORS = (
    "from django.contrib.auth.models import User; "
    "print('EDITORS', sorted(User.objects.values_list('username', flat=True)))"
)


def script(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def editors(env: dict[str, str]) -> list[str]:
    out = manage(env, "shell", "--no-imports", "-c", EDITORS)
    return eval(next(line for line in out.splitlines() if line.startswith("EDITORS"))[8:])


def add_editor(env: dict[str, str], name: str) -> None:
    manage(env, "create_editor", name, "--email", f"{name}@example.org", "--password", "x" * 20)


def add_learners(env: dict[str, str], count: int) -> None:
    manage(
        env,
        "shell",
        "--no-imports",
        "-c",
        f"from practice.models import Learner\nfor _ in range({count}): Learner.objects.create()",
    )


def learners(env: dict[str, str]) -> int:
    code = "from practice.models import Learner; print('LEARNERS', Learner.objects.count())"
    out = manage(env, "shell", "--no-imports", "-c", code)
    return int(next(line for line in out.splitlines() if line.startswith("LEARNERS"))[9:])


def is_postgres(env: dict[str, str]) -> bool:
    return env["DATABASE_URL"].startswith("postgres")


def databases_beside(env: dict[str, str]) -> list[str]:
    """Databases named after the live one: scratch copies and replaced ones."""
    parts = urlsplit(env["DATABASE_URL"])
    if is_postgres(env):
        import psycopg

        name = parts.path.lstrip("/")
        with psycopg.connect(parts._replace(path="/postgres").geturl()) as db:
            rows = db.execute(
                "SELECT datname FROM pg_database WHERE datname LIKE %s", [f"{name}\\_%"]
            ).fetchall()
        return sorted(row[0] for row in rows)
    live = Path(parts.path[1:])
    return sorted(
        path.name
        for path in live.parent.glob(f"{live.stem}.*")
        if not path.name.startswith(live.name)
    )


def backup_now(env: dict[str, str], folder: Path) -> None:
    folder.mkdir(exist_ok=True)
    made = script(env, "bin/backup", str(folder))
    assert made.returncode == 0, made.stderr


@pytest.fixture
def site(server_database, tmp_path):
    media = tmp_path / "media"
    (media / "videos").mkdir(parents=True)
    env = production_env(server_database, MEDIA_ROOT=str(media))
    manage(env, "migrate", "--no-input", "-v0")
    manage(env, "collectstatic", "--no-input", "-v0")  # else /readyz is red, as it should be
    yield env
    if server_database.startswith("postgres"):
        import psycopg

        parts = urlsplit(server_database)
        name = parts.path.lstrip("/")
        with psycopg.connect(parts._replace(path="/postgres").geturl(), autocommit=True) as db:
            for (leftover,) in db.execute(
                "SELECT datname FROM pg_database WHERE datname LIKE %s", [f"{name}\\_%"]
            ).fetchall():
                db.execute(f'DROP DATABASE "{leftover}" WITH (FORCE)')


def test_backup_then_restore_brings_back_the_database_and_the_media(site, tmp_path):
    media = Path(site["MEDIA_ROOT"])
    (media / "videos" / "stars.mp4").write_bytes(b"the first video")
    add_editor(site, "ada")
    backups = tmp_path / "backups"
    backups.mkdir()

    made = script(site, "bin/backup", str(backups))
    assert made.returncode == 0, made.stderr
    names = sorted(path.name for path in backups.iterdir())
    assert [name.split("-")[0] for name in names] == ["db", "media", "meta"]
    assert names[0].endswith(".dump" if site["DATABASE_URL"].startswith("postgres") else ".sqlite3")
    meta = json.loads((backups / names[2]).read_text())
    assert meta["release"] == release() != "unknown"

    # What happens after the backup, and is to be undone.
    add_editor(site, "bob")
    (media / "videos" / "stars.mp4").write_bytes(b"overwritten")
    (media / "videos" / "later.mp4").write_bytes(b"uploaded after the backup")

    started = []
    with gunicorn(site, workers=2, started=started) as base:
        restored = script(site, "bin/restore", str(backups))
        assert restored.returncode == 0, restored.stdout + restored.stderr
        assert "checked: " in restored.stdout
        assert re.search(r"release +\S+ +\S+ \(the code that runs\)", restored.stdout)
        # The running server carries on, on the restored database.
        with urllib.request.urlopen(base + "/readyz", timeout=10) as response:
            assert response.status == 200

    assert editors(site) == ["ada"]
    assert (media / "videos" / "stars.mp4").read_bytes() == b"the first video"
    assert not (media / "videos" / "later.mp4").exists()
    kept = next(media.parent.glob("media.replaced-*"))
    assert (kept / "videos" / "later.mp4").read_bytes() == b"uploaded after the backup"


def test_a_damaged_backup_is_refused_and_the_live_data_is_untouched(site, tmp_path):
    add_editor(site, "ada")
    (Path(site["MEDIA_ROOT"]) / "videos" / "stars.mp4").write_bytes(b"live")
    backups = tmp_path / "backups"
    backups.mkdir()
    kind = ".dump" if site["DATABASE_URL"].startswith("postgres") else ".sqlite3"
    (backups / f"db-20260101T000000Z{kind}").write_bytes(b"not a database at all" * 100)

    result = script(site, "bin/restore", str(backups))
    assert result.returncode == 1
    assert result.stderr.startswith("bin/restore: ")
    assert "Traceback" not in result.stderr
    assert editors(site) == ["ada"]
    assert (Path(site["MEDIA_ROOT"]) / "videos" / "stars.mp4").read_bytes() == b"live"
    assert databases_beside(site) == []


def test_a_truncated_backup_stops_the_restore_and_leaves_no_scratch_database(site, tmp_path):
    add_editor(site, "ada")
    backups = tmp_path / "backups"
    backup_now(site, backups)
    dump = next(backups.glob("db-*"))
    dump.write_bytes(dump.read_bytes()[: dump.stat().st_size // 2])

    result = script(site, "bin/restore", str(backups))
    assert result.returncode == 1, result.stdout
    assert "Traceback" not in result.stderr
    assert editors(site) == ["ada"]
    assert databases_beside(site) == []


def test_a_restore_that_would_lose_learners_is_refused_unless_told_yes(site, tmp_path):
    add_learners(site, 1)
    backups = tmp_path / "backups"
    backup_now(site, backups)
    add_learners(site, 2)  # they came after the backup: a restore would lose them

    refused = script(site, "bin/restore", str(backups))
    assert refused.returncode == 1
    assert re.search(r"taken +\d{4}-\d\d-\d\d \d\d:\d\d UTC, \d+ min ago +now", refused.stdout)
    assert re.search(r"learners +1 +3\n", refused.stdout), refused.stdout
    assert re.search(r"answers +0 +0\n", refused.stdout)
    assert "holds more learners than the backup" in refused.stderr
    assert "--yes" in refused.stderr
    assert learners(site) == 3
    assert databases_beside(site) == []

    replaced = script(site, "bin/restore", str(backups), "--yes")
    assert replaced.returncode == 0, replaced.stdout + replaced.stderr
    assert learners(site) == 1
    kept = databases_beside(site)
    assert len(kept) == 1 and "replaced" in kept[0]
    removal = (
        f"dropdb {kept[0]}"
        if is_postgres(site)
        else f"rm {Path(site['DATABASE_URL'][10:]).parent / kept[0]}"
    )
    assert removal in replaced.stdout


def test_a_backup_of_the_other_kind_of_database_is_refused(site, tmp_path):
    other = ".sqlite3" if site["DATABASE_URL"].startswith("postgres") else ".dump"
    path = tmp_path / f"db-20260101T000000Z{other}"
    path.write_bytes(b"x")
    result = script(site, "bin/restore", str(path))
    assert result.returncode == 1
    assert "not a backup of this site's kind of database" in result.stderr


def test_backup_keeps_the_newest_sets_only(site, tmp_path):
    backups = tmp_path / "backups"
    backups.mkdir()
    kind = ".dump" if site["DATABASE_URL"].startswith("postgres") else ".sqlite3"
    for day in ("01", "02", "03"):
        (backups / f"db-202601{day}T000000Z{kind}").write_bytes(b"old")
        (backups / f"media-202601{day}T000000Z.tar.gz").write_bytes(b"old")
    result = script(site, "bin/backup", str(backups), "--keep", "2")
    assert result.returncode == 0, result.stderr
    left = sorted(path.name[: -len(path.suffix)].split("-", 1)[1] for path in backups.glob("db-*"))
    assert len(left) == 2 and left[0] == "20260103T000000Z"


def test_backup_into_a_missing_folder_says_so(site, tmp_path):
    result = script(site, "bin/backup", str(tmp_path / "nowhere"))
    assert result.returncode == 1
    assert "is not a folder" in result.stderr


SEED_ID = "mt__e-JwIxHek"


def retitle(env: dict[str, str], title: str) -> None:
    """An editor's change to the seed lesson, saved as the admin saves it (the content version
    goes up)."""
    code = (
        f"from lessons.models import Lesson; lesson = Lesson.objects.get(public_id={SEED_ID!r}); "
        f"lesson.title = {title!r}; lesson.save()"
    )
    manage(env, "shell", "--no-imports", "-c", code)


def marks(env: dict[str, str]) -> dict[str, int]:
    return json.loads(manage(env, "restore_marks").strip().splitlines()[-1])


def test_a_restore_never_hands_out_a_learner_id_or_content_version_again(site, tmp_path):
    """The operators' walk of 2026-12-06: after a restore, learner ids and the content version
    started again from the backup's, so a browser whose session (kept in Redis) named a learner
    made after the backup read and wrote the next new learner's progress, and the app processes
    served pages of an edit the restore had undone."""
    manage(site, "load_demo")
    add_learners(site, 1)
    backups = tmp_path / "backups"
    backup_now(site, backups)
    add_learners(site, 3)  # made after the backup: their ids must never be handed out again
    with gunicorn(site, workers=1) as base:
        retitle(site, "An edit the restore undoes")
        with urllib.request.urlopen(base + "/learn/computing/" + SEED_ID) as response:
            assert "An edit the restore undoes" in response.read().decode()
        before = marks(site)
        restored = script(site, "bin/restore", str(backups), "--yes")
        assert restored.returncode == 0, restored.stdout + restored.stderr
        assert "Learner ids go on after" in restored.stdout
        retitle(site, "The edit after the restore")
        with urllib.request.urlopen(base + "/learn/computing/" + SEED_ID) as response:
            page = response.read().decode()
        assert "The edit after the restore" in page and "the restore undoes" not in page
    add_learners(site, 1)
    after = marks(site)
    assert after["learner_id"] > before["learner_id"]
    assert after["content_version"] > before["content_version"]
