"""gunicorn settings, all from the environment (gunicorn also reads WEB_CONCURRENCY itself)."""

import multiprocessing
import os
import shutil
import signal
import tempfile
from pathlib import Path

from gunicorn import systemd

# systemd reads the environment file only when it starts the service; a reload reads it here
# again, before the settings below and the site read it, so a changed, added or removed variable
# or key needs no restart (`pre_exec` below).
_environment_file: dict[str, str] = {}
if os.environ.get("ENVIRONMENT_FILE"):
    from lightmysky.lib.envfile import read_environment_file

    _environment_file = read_environment_file(os.environ["ENVIRONMENT_FILE"])
    os.environ.update(_environment_file)

bind = os.environ.get("BIND", "127.0.0.1:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count() * 2 + 1))
threads = int(os.environ.get("GUNICORN_THREADS", "1"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
# Requests are logged by the application itself, one line each (see LOG_FORMAT).
accesslog = None
errorlog = "-"
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
# The master imports the site once and forks its workers from it, so a new worker answers at
# once. gunicorn's HUP would then keep the old code: `systemctl reload` sends USR2 instead
# (docs/deploy.md), which starts a new master on the code, configuration and environment file
# now on disk; once its workers are up it retires the old master (`post_worker_init` below),
# whose workers finish their requests. Answers never wait for workers to import the site
# (`make upgrade-check` measures the longest wait through a reload).
preload_app = True

# A worker is replaced after this many requests, a guard against slow growth of its memory;
# kept lax, since a replacement's requests wait while it starts. 0 never replaces one.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "100000"))
max_requests_jitter = max_requests // 10  # workers started together are not replaced together
# gunicorn 27's runtime control socket is not needed (and clashes when several run on one host).
control_socket_disable = True

# With LOG_FORMAT=json, gunicorn's own lines (start, worker exits, timeouts) are JSON objects on
# stdout too, like the application's, so one collector reads both.
if os.environ.get("LOG_FORMAT", "").strip().lower() == "json":  # as settings.py reads it
    logconfig_dict = {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": "lightmysky.lib.logs.JsonFormatter"}},
        "handlers": {
            "stdout": {
                "class": "logging.StreamHandler",
                "formatter": "json",
                "stream": "ext://sys.stdout",
            }
        },
        "root": {"level": "INFO", "handlers": []},
        "loggers": {
            "gunicorn.error": {"level": "INFO", "handlers": ["stdout"], "propagate": False},
            # Requests are logged once, by the application (with their request id).
            "gunicorn.access": {"level": "CRITICAL", "handlers": [], "propagate": False},
        },
    }


# Metrics (lightmysky/metrics.py): every worker counts in a file of its own in one folder, so
# that /metrics, whichever worker answers it, reports the whole server. The folder lives as long
# as the server: a reload keeps the counts (the new master counts on in it), a restart starts
# them again.
_TEMPLATES = Path(__file__).resolve().parent / "templates"
_METRICS_DIR_PREFIX = os.path.join(tempfile.gettempdir(), "lightmysky-metrics-")


# Made here, not when the server starts: the preloaded site reads it as it loads its settings.
if not os.environ.get("METRICS_DIR"):
    os.environ["METRICS_DIR"] = tempfile.mkdtemp(prefix=os.path.basename(_METRICS_DIR_PREFIX))


def pre_exec(server):
    # The master a reload starts keeps counting in the same folder.
    server.cfg.env_orig["METRICS_DIR"] = os.environ["METRICS_DIR"]
    # It starts with the environment systemd gave the first master, which holds the file's
    # variables as they were then; it sets them again from the file as it is now, so one that
    # was removed from the file must not come back from there.
    for name in _environment_file.keys() - {"ENVIRONMENT_FILE"}:
        server.cfg.env_orig.pop(name, None)


def when_ready(server):
    from django.template.loader import get_template
    from django.urls import get_resolver

    from lightmysky.release import release

    # What each worker would otherwise do on its first requests, all at once after a reload:
    # import the URLconf (and with it every view and the API's schemas) and compile the site's
    # templates. Forked workers share the result.
    get_resolver().url_patterns  # noqa: B018
    for template in sorted(_TEMPLATES.rglob("*.html")):
        get_template(str(template.relative_to(_TEMPLATES)))
    server.log.info("LightMySky %s ready (pid %s)", release(), os.getpid())


def post_worker_init(worker):
    # In a master started by a reload (USR2), once its last worker is up: it becomes the
    # service's main process for systemd (NotifyAccess=all) and the old master is retired, its
    # workers finishing their requests. Until then both sets of workers answer.
    old_master = os.environ.get("GUNICORN_PID")
    if old_master and worker.age == worker.cfg.workers:
        systemd.sd_notify(f"MAINPID={worker.ppid}", worker.log)
        os.kill(int(old_master), signal.SIGTERM)


def child_exit(server, worker):
    from lightmysky.lib.metricfiles import fold_exited

    fold_exited(os.environ["METRICS_DIR"], worker.pid)


def on_exit(server):
    if server.reexec_pid:  # a reload: the new master goes on counting in the folder
        return
    if os.environ["METRICS_DIR"].startswith(_METRICS_DIR_PREFIX):
        shutil.rmtree(os.environ["METRICS_DIR"], ignore_errors=True)
