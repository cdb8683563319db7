"""Real app servers for operations tests: gunicorn processes on loopback ports of their own."""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from tools.scratch import free_port

ROOT = Path(__file__).resolve().parents[2]
GUNICORN = Path(sys.executable).with_name("gunicorn")
SECRET = "operations-test-secret-key-" + "x" * 40


def deploy(env: dict[str, str], *, root: Path = ROOT) -> None:
    """What a deployment does before starting its servers."""
    manage(env, "migrate", "--no-input", "-v0", root=root)
    manage(env, "collectstatic", "--no-input", "-v0", root=root)
    manage(env, "load_demo", root=root)


# One folder a test process, outside the project, removed when the process ends.
STATIC_ROOT = tempfile.mkdtemp(prefix="lightmysky-ops-static-")
atexit.register(shutil.rmtree, STATIC_ROOT, ignore_errors=True)


def production_env(database_url: str, **extra: str) -> dict[str, str]:
    """The environment of a production deployment behind a TLS-ending proxy, on loopback."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST"))}
    env |= {
        "DEBUG": "0",
        "SECRET_KEY": SECRET,
        "DATABASE_URL": database_url,
        "ALLOWED_HOSTS": "127.0.0.1,localhost,testserver",
        "SITE_URL": "http://127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "SECURE_COOKIES": "0",
        "STATIC_ROOT": STATIC_ROOT,
        "LOG_LEVEL": "WARNING",
    }
    return env | extra


def manage(env: dict[str, str], *args: str, root: Path = ROOT) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


class Master:
    """A gunicorn server's master process, found by its pid file: a reload hands the server to a
    new master."""

    def __init__(self, pid_file: Path) -> None:
        self.pid_file = pid_file

    def pid(self) -> int | None:
        try:
            return int(self.pid_file.read_text())
        except (OSError, ValueError):  # between the old master's exit and the new one's rename
            return None

    def reload(self, timeout: float = 120) -> None:
        """What `systemctl reload` does (docs/deploy.md: USR2), until the new master has taken
        over and the old one, with its workers, has exited."""
        old = self.pid()
        assert old is not None
        os.kill(old, signal.SIGUSR2)
        deadline = time.monotonic() + timeout
        while self.pid() in {old, None} or running(old):
            assert time.monotonic() < deadline, "the new master did not take over"
            time.sleep(0.1)


def _stat(path: Path) -> list[str]:
    """A process's state, parent and the rest (/proc/PID/stat after its name); [] once gone."""
    try:
        return path.read_text().rsplit(")", 1)[1].split()
    except OSError:
        return []


def running(pid: int) -> bool:
    """Whether the process runs (an exited child not yet waited for is a zombie: not running)."""
    return _stat(Path(f"/proc/{pid}/stat"))[:1] not in ([], ["Z"])


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (a gunicorn master's workers)."""
    return [
        int(path.parent.name)
        for path in Path("/proc").glob("[0-9]*/stat")
        if _stat(path)[1:2] == [str(pid)]
    ]


@contextlib.contextmanager
def gunicorn(
    env: dict[str, str], *, workers: int = 2, started: list | None = None, root: Path = ROOT
) -> Iterator[str]:
    """A gunicorn serving the site; yields its base URL and always stops it. Its Master is
    appended to `started` when given (to reload it)."""
    port = free_port()
    master = Master(Path(tempfile.gettempdir()) / f"lightmysky-ops-{port}.pid")
    process = subprocess.Popen(
        [str(GUNICORN), "-c", "gunicorn.conf.py", "-p", str(master.pid_file), "lightmysky.wsgi"],
        cwd=root,
        env=env | {"BIND": f"127.0.0.1:{port}", "WEB_CONCURRENCY": str(workers)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    if started is not None:
        started.append(master)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(base + "/healthz", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"gunicorn did not start: {process.stderr.read()}") from None
                time.sleep(0.2)
        yield base
    finally:
        if (pid := master.pid()) not in {None, process.pid}:  # a master started by a reload
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 15
            while master.pid_file.exists() and time.monotonic() < deadline:
                time.sleep(0.1)
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stderr.close()
