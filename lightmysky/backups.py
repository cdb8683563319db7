"""bin/backup and bin/restore: the database and the uploaded media, in one folder of sets.

A set is `db-STAMP.dump` (PostgreSQL, pg_dump's custom format) or `db-STAMP.sqlite3`,
`media-STAMP.tar.gz` and `meta-STAMP.json` (when it was taken, by which release), STAMP being the
UTC time it was taken. Both scripts read the site's own settings (DATABASE_URL, MEDIA_ROOT), so
they run as the service does: as its user, in the checkout, with its environment file loaded
(docs/deploy.md, section 7).

A restore never touches the live data before the copy has proved itself: it loads the dump into
a scratch database, checks it (the load finished without error, SQLite's integrity check, every
migration of this code applied), shows what it holds beside what the live database holds, and
refuses to replace a database with more learners or answers unless told `--yes`. Only then does
it swap the copy in; the data it replaced is kept beside it. A restore that stops for any reason
removes its scratch database.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tarfile
import time
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from lightmysky.release import release

ROOT = Path(__file__).resolve().parent.parent
STAMP_FORMAT = "%Y%m%dT%H%M%SZ"


class Failed(Exception):
    """A step failed; the message says which and what to do."""


def say(message: str) -> None:
    print(message, flush=True)


def site_settings():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lightmysky.settings")
    sys.path.insert(0, str(ROOT))
    from django.conf import settings

    return settings


def postgres_env(database: dict, name: str | None = None) -> dict[str, str]:
    """libpq's variables for the site's database (or another on the same server)."""
    env = dict(os.environ)
    for variable, value in {
        "PGHOST": database.get("HOST"),
        "PGPORT": database.get("PORT"),
        "PGUSER": database.get("USER"),
        "PGPASSWORD": database.get("PASSWORD"),
        "PGDATABASE": name or database["NAME"],
        "PGSSLMODE": database.get("OPTIONS", {}).get("sslmode"),
    }.items():
        if value:
            env[variable] = str(value)
    return env


def run(command: list[str], env: dict[str, str] | None = None, what: str = "") -> str:
    result = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        raise Failed(f"{what or command[0]} failed: {(result.stderr or result.stdout).strip()}")
    return result.stdout


def is_postgres(database: dict) -> bool:
    return "postgresql" in database["ENGINE"]


def local_media(settings) -> Path | None:
    """MEDIA_ROOT, unless uploads go to object storage (back that up with its own tools)."""
    backend = settings.STORAGES["default"]["BACKEND"]
    return Path(settings.MEDIA_ROOT) if backend.endswith("FileSystemStorage") else None


# -- backup ------------------------------------------------------------------------------------


def backup(folder: Path, keep: int) -> list[Path]:
    settings = site_settings()
    database = settings.DATABASES["default"]
    if not folder.is_dir():
        raise Failed(f"{folder} is not a folder: make it first (docs/deploy.md, section 1).")
    stamp = time.strftime(STAMP_FORMAT, time.gmtime())
    made = []
    if is_postgres(database):
        target = folder / f"db-{stamp}.dump"
        partial = target.with_name(target.name + ".partial")
        run(
            ["pg_dump", "--format=custom", f"--file={partial}"],
            postgres_env(database),
            "pg_dump",
        )
    else:
        target = folder / f"db-{stamp}.sqlite3"
        partial = target.with_name(target.name + ".partial")
        # SQLite's online backup: a consistent copy while the site goes on writing.
        with sqlite3.connect(database["NAME"]) as live, sqlite3.connect(partial) as copy:
            live.backup(copy)
        copy.close()
        live.close()
    partial.rename(target)
    made.append(target)
    meta = folder / f"meta-{stamp}.json"
    meta.write_text(json.dumps({"taken_at": stamp, "release": release()}) + "\n")
    made.append(meta)
    if (media := local_media(settings)) is not None:
        target = folder / f"media-{stamp}.tar.gz"
        partial = target.with_name(target.name + ".partial")
        with tarfile.open(partial, "w:gz") as archive:
            if media.is_dir():
                archive.add(media, arcname="media")
        partial.rename(target)
        made.append(target)
    else:
        say("media: in object storage (MEDIA_STORAGE_URL), not backed up here: use its versioning")
    for old in sorted(stamps(folder))[:-keep] if keep > 0 else []:
        for path in folder.glob(f"*-{old}.*"):
            path.unlink()
    return made


def stamps(folder: Path) -> set[str]:
    return {
        path.name[3:].split(".", 1)[0]
        for path in folder.glob("db-*")
        if path.suffix in {".dump", ".sqlite3"}
    }


def backup_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bin/backup", description="Back up the database and the uploaded media into FOLDER."
    )
    parser.add_argument("folder", type=Path)
    parser.add_argument(
        "--keep", type=int, default=14, help="sets to keep, newest first (default 14; 0 keeps all)"
    )
    args = parser.parse_args(argv)
    os.umask(0o027)
    try:
        for path in backup(args.folder, args.keep):
            say(f"wrote {path} ({path.stat().st_size} bytes)")
    except Failed as error:
        print(f"bin/backup: {error}", file=sys.stderr)
        return 1
    return 0


# -- restore -----------------------------------------------------------------------------------


def chosen_set(given: Path) -> tuple[Path, Path | None]:
    """The database file and media archive to restore: `given`, or the newest set in a folder."""
    if given.is_dir():
        found = sorted(stamps(given))
        if not found:
            raise Failed(f"no backup (db-*.dump or db-*.sqlite3) in {given}.")
        given = next(given.glob(f"db-{found[-1]}.*"))
    if not given.is_file():
        raise Failed(f"{given} does not exist.")
    media = given.with_name(f"media-{set_stamp(given)}.tar.gz")
    return given, media if media.is_file() else None


def set_stamp(dump: Path) -> str:
    return dump.name[3:].split(".", 1)[0]


def manage(database_url: str, *args: str) -> str:
    return run(
        [sys.executable, "manage.py", *args],
        dict(os.environ, DATABASE_URL=database_url),
        f"manage.py {' '.join(args)}",
    )


def verify(database_url: str, migrate: bool) -> None:
    if migrate:
        manage(database_url, "migrate", "--no-input", "-v0")
    try:
        manage(database_url, "migrate", "--check")
    except Failed as error:
        raise Failed(
            "the backup is of another release (its migrations differ from this code's): check "
            f"out that release, or restore with --migrate to bring it up to this one. {error}"
        ) from None
    say("checked: the copy loads, and every migration of this code is applied to it")


COUNTED = ("learners", "answers", "lessons")
COUNT_CODE = (
    "import json; from lessons.models import Lesson; from practice.models import Learner, Review; "
    "print(json.dumps({'learners': Learner.objects.count(), 'answers': Review.objects.count(), "
    "'lessons': Lesson.objects.count()}))"
)


def counts(database_url: str) -> dict[str, int]:
    """Learners, answers and lessons in a database, counted by this code's models."""
    output = manage(database_url, "shell", "--no-imports", "-c", COUNT_CODE)
    return json.loads(output.strip().splitlines()[-1])


def backup_facts(dump: Path) -> tuple[str, str]:
    """When the backup was taken (from its name) and by which release (from its meta file;
    sets written before bin/backup recorded it have none)."""
    stamp = set_stamp(dump)
    try:
        meta = json.loads(dump.with_name(f"meta-{stamp}.json").read_text())
    except (OSError, ValueError):
        meta = {}
    try:
        taken = datetime.strptime(stamp, STAMP_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        when = "unknown (the file is not named db-STAMP)"
    else:
        when = f"{taken:%Y-%m-%d %H:%M} UTC, {age(taken)} ago"
    return when, str(meta.get("release") or "not recorded")


def age(moment: datetime) -> str:
    hours = max(0.0, (datetime.now(UTC) - moment).total_seconds() / 3600)
    if hours < 1.5:
        return f"{hours * 60:.0f} min"
    return f"{hours:.0f} h" if hours < 48 else f"{hours / 24:.0f} days"


def approve(dump: Path, scratch_url: str, live_url: str | None, live_name: str, yes: bool) -> None:
    """Show the backup beside the live database (live_url None: there is none yet), and refuse
    to replace one that holds more learners or answers unless told `--yes`."""
    restored = counts(scratch_url)
    unreadable = ""
    live: dict[str, int] | None = dict.fromkeys(COUNTED, 0)
    if live_url is not None:
        try:
            live = counts(live_url)
        except Failed as error:
            live, unreadable = None, str(error).strip().splitlines()[-1]
    taken, made_by = backup_facts(dump)
    rows = [
        ("", f"backup {dump.name}", f"live database {live_name}"),
        ("taken", taken, "now"),
        ("release", made_by, f"{release()} (the code that runs)"),
    ]
    for name in COUNTED:
        rows.append((name, f"{restored[name]:,}", f"{live[name]:,}" if live else "?"))
    widths = [max(len(row[column]) for row in rows) for column in (0, 1)]
    for label, backup_value, live_value in rows:
        say(f"  {label:<{widths[0]}}  {backup_value:<{widths[1]}}  {live_value}")
    if yes:
        return
    again = "then run bin/restore again with --yes to replace it anyway."
    if live is None:
        raise Failed(
            f"the live database could not be counted ({unreadable}), so nothing was changed. "
            f"If it is empty or damaged, {again}"
        )
    if more := [name for name in ("learners", "answers") if live[name] > restored[name]]:
        raise Failed(
            f"the live database holds more {' and more '.join(more)} than the backup, and "
            "replacing it would lose them, so nothing was changed. Check that this is the backup "
            f"you mean (given a folder, bin/restore takes its newest set), {again}"
        )


def carry_marks(live_url: str | None, scratch_url: str) -> None:
    """Raise the copy's next learner id and content version above the live database's, so that
    nothing kept outside the database (sessions in Redis, the processes' cached pages) matches
    the copy by accident (manage.py restore_marks)."""
    if live_url is None:
        return
    try:
        marks = (manage(live_url, "restore_marks").strip().splitlines() or [""])[-1]
    except Failed as error:
        why = (str(error).strip().splitlines() or ["?"])[-1]
        say(
            "the live database's last learner id and content version could not be read "
            f"({why}): after the restore, restart the app "
            "servers and empty the Redis of CACHE_URL, if any, so that no session or cached "
            "page from before it is used"
        )
        return
    said = manage(scratch_url, "restore_marks", "--raise-to", marks).strip().splitlines()
    say(said[-1] if said else "raised the copy's learner ids and content version")


def restore_postgres(database: dict, dump: Path, migrate: bool, stamp: str, yes: bool) -> None:
    live = database["NAME"]
    scratch, replaced = f"{live}_restore", f"{live}_replaced_{stamp.lower()}"
    admin = postgres_env(database, "postgres")
    psql = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1"]

    def query(sql: str) -> list[str]:
        return run([*psql, "-tA", "-c", sql], admin, "psql").split()

    def drop_scratch() -> None:
        # Never the only copy: if a failed swap left no database of the live name, the
        # scratch copy is what there is.
        if not query(f"SELECT 1 FROM pg_database WHERE datname = '{live}'"):
            say(f"the scratch database {scratch} is kept: there is no database {live} now")
            return
        dropped = subprocess.run(
            [*psql, "-c", f'DROP DATABASE IF EXISTS "{scratch}"'],
            env=admin,
            capture_output=True,
            text=True,
        )
        if dropped.returncode == 0:
            say(f"removed the scratch database {scratch}")
        else:
            say(f"could not remove the scratch database {scratch}: {dropped.stderr.strip()}")

    run([*psql, "-c", f'DROP DATABASE IF EXISTS "{scratch}"'], admin, "dropping the scratch copy")
    run([*psql, "-c", f'CREATE DATABASE "{scratch}"'], admin, "creating the scratch database")
    url = urlsplit(os.environ["DATABASE_URL"])
    scratch_url = url._replace(path=f"/{scratch}").geturl()
    try:
        say(f"loading {dump.name} into the scratch database {scratch}")
        run(
            ["pg_restore", "--no-owner", "--exit-on-error", f"--dbname={scratch}", str(dump)],
            postgres_env(database, scratch),
            "pg_restore",
        )
        verify(scratch_url, migrate)
        approve(dump, scratch_url, os.environ["DATABASE_URL"], live, yes)
        carry_marks(os.environ["DATABASE_URL"], scratch_url)
        swap_postgres(psql, admin, live=live, scratch=scratch, replaced=replaced)
    except BaseException:
        drop_scratch()
        raise
    size = query(f"SELECT pg_size_pretty(pg_database_size('{replaced}'))")
    say(
        f"restored. The database it replaced is kept as {replaced} ({' '.join(size)}); once "
        f"satisfied, remove it: dropdb {replaced} (as postgres: runuser -u postgres -- dropdb "
        f"{replaced})"
    )
    earlier = query(
        f"SELECT datname FROM pg_database WHERE datname LIKE '{live}\\_replaced\\_%' "
        f"AND datname <> '{replaced}' ORDER BY 1"
    )
    if earlier:
        say(
            "earlier restores' replaced copies are still kept (remove them the same way): "
            + ", ".join(earlier)
        )


def swap_postgres(psql: list[str], admin: dict, *, live: str, scratch: str, replaced: str) -> None:
    say(f"swapping: {live} becomes {replaced}, {scratch} becomes {live}")
    # Connections to the live database (the app servers' persistent ones) end here; each
    # server's next request opens one to the restored database, which then has the name.
    try:
        run(
            [
                *psql,
                "-c",
                f'ALTER DATABASE "{live}" ALLOW_CONNECTIONS false',
                "-c",
                "SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_stat_activity "
                f"WHERE datname = '{live}' AND usename = current_user AND pid <> pg_backend_pid()",
                "-c",
                f'ALTER DATABASE "{live}" RENAME TO "{replaced}"',
                "-c",
                f'ALTER DATABASE "{scratch}" RENAME TO "{live}"',
                "-c",
                f'ALTER DATABASE "{replaced}" ALLOW_CONNECTIONS true',
            ],
            admin,
            "the swap",
        )
    except Failed as error:
        # The live database stays what it was, open again.
        subprocess.run(
            [*psql, "-c", f'ALTER DATABASE "{live}" ALLOW_CONNECTIONS true'],
            env=admin,
            capture_output=True,
        )
        raise Failed(
            f"{error}. The live database is unchanged; stop what else is connected to it "
            f"(psql sessions of other roles) and run bin/restore again."
        ) from None


def remove_sqlite_file(path: Path) -> None:
    """A database file and the journal files SQLite keeps beside it."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)


def restore_sqlite(database: dict, copy: Path, migrate: bool, stamp: str, yes: bool) -> None:
    live = Path(database["NAME"])
    scratch = live.with_name(f"{live.stem}.restore{live.suffix}")
    replaced = live.with_name(f"{live.stem}.replaced-{stamp}{live.suffix}")
    remove_sqlite_file(scratch)
    try:
        shutil.copyfile(copy, scratch)
        connection = sqlite3.connect(scratch)
        try:
            problems = connection.execute("PRAGMA integrity_check").fetchall()
        except sqlite3.DatabaseError as error:
            problems = [str(error)]
        finally:
            connection.close()
        if problems != [("ok",)]:
            raise Failed(f"{copy} is damaged, nothing was changed: {problems[:5]}")
        scratch_url = f"sqlite:///{scratch.resolve()}"
        verify(scratch_url, migrate)
        live_url = f"sqlite:///{live.resolve()}" if live.exists() else None
        approve(copy, scratch_url, live_url, str(live), yes)
        carry_marks(live_url, scratch_url)
        say(f"swapping: the live database is kept as {replaced}, then overwritten by the backup")
        # SQLite's backup API writes into the live file under its lock, so the app servers'
        # open connections see the restored data (replacing the file would leave them on the
        # old one until their next request notices: lightmysky.lib.sqlitefile).
        with sqlite3.connect(live) as source, sqlite3.connect(replaced) as kept:
            source.backup(kept)
        kept.close()
        with sqlite3.connect(scratch) as source, sqlite3.connect(live) as target:
            source.backup(target)
        source.close()
        target.close()
    finally:
        remove_sqlite_file(scratch)
    size = replaced.stat().st_size / 1024 / 1024
    say(
        f"restored. The database it replaced is kept in {replaced} ({size:.1f} MB); once "
        f"satisfied, remove it: rm {replaced}"
    )
    earlier = sorted(
        str(path)
        for path in live.parent.glob(f"{live.stem}.replaced-*{live.suffix}")
        if path != replaced
    )
    if earlier:
        say(
            "earlier restores' replaced copies are still kept (remove them the same way): "
            + ", ".join(earlier)
        )


def restore_media(media_root: Path, archive_path: Path, stamp: str) -> None:
    """Unpack beside MEDIA_ROOT, then move its contents in: the folder itself stays (the
    service's ReadWritePaths= is a mount of that very folder)."""
    unpacked = media_root.parent / f".media-restore-{stamp}"
    replaced = media_root.parent / f"{media_root.name}.replaced-{stamp}"
    shutil.rmtree(unpacked, ignore_errors=True)
    with tarfile.open(archive_path) as archive:
        archive.extractall(unpacked, filter="data")
    restored = unpacked / "media"
    restored.mkdir(parents=True, exist_ok=True)  # an empty archive unpacks to nothing
    media_root.mkdir(exist_ok=True)
    replaced.mkdir()
    for entry in media_root.iterdir():
        entry.rename(replaced / entry.name)
    for entry in restored.iterdir():
        entry.rename(media_root / entry.name)
    shutil.rmtree(unpacked)
    say(
        f"media restored into {media_root}; the replaced files are kept in {replaced}: once "
        f"satisfied, remove them: rm -r {replaced}"
    )


def restore(given: Path, migrate: bool, yes: bool) -> None:
    settings = site_settings()
    database = settings.DATABASES["default"]
    dump, media_archive = chosen_set(given)
    if is_postgres(database) != (dump.suffix == ".dump"):
        raise Failed(f"{dump.name} is not a backup of this site's kind of database.")
    stamp = time.strftime(STAMP_FORMAT, time.gmtime())
    if "DATABASE_URL" not in os.environ:
        raise Failed("DATABASE_URL is not set: load the site's environment file first.")
    if is_postgres(database):
        restore_postgres(database, dump, migrate, stamp, yes)
    else:
        restore_sqlite(database, dump, migrate, stamp, yes)
    if media_archive is not None and (media := local_media(settings)) is not None:
        restore_media(media, media_archive, stamp)


def restore_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bin/restore",
        description="Restore a backup of bin/backup: into a scratch database, checked, then "
        "swapped in; the media with it. BACKUP is a db-STAMP file, or a folder (its newest).",
    )
    parser.add_argument("backup", type=Path)
    parser.add_argument(
        "--migrate",
        action="store_true",
        help="apply this code's newer migrations to the restored copy before checking it",
    )
    parser.add_argument(
        "--yes",
        action="store_true",
        help="replace the live database even if it holds more learners or answers than the backup",
    )
    args = parser.parse_args(argv)
    os.umask(0o027)
    try:
        restore(args.backup, args.migrate, args.yes)
    except Failed as error:
        print(f"bin/restore: {error}", file=sys.stderr)
        return 1
    return 0
