"""gunicorn settings, all from the environment (gunicorn also reads WEB_CONCURRENCY itself)."""

import multiprocessing
import os
import shutil
import tempfile

bind = os.environ.get("BIND", "127.0.0.1:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count() * 2 + 1))
threads = int(os.environ.get("GUNICORN_THREADS", "1"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
# Requests are logged by the application itself, one line each (see LOG_FORMAT).
accesslog = None
errorlog = "-"
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
# A worker is replaced after this many requests, a guard against slow growth of its memory. A
# replacement costs about 0.7 s of CPU (the new worker imports the site and fills its caches
# again) while its requests wait: at 2,000 that halved throughput under load and put second-long
# waits into the slowest requests (docs/performance.md). 0 never replaces one.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "100000"))
max_requests_jitter = max_requests // 10  # workers started together are not replaced together
# gunicorn 27's runtime control socket is not needed (and clashes when several run on one host).
control_socket_disable = True

# With LOG_FORMAT=json, gunicorn's own lines (start, worker exits, timeouts) are JSON objects on
# stdout too, like the application's, so one collector reads both.
if os.environ.get("LOG_FORMAT") == "json":
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
# as the master: a reload (HUP) keeps the counts, a restart starts them again.
_METRICS_DIR_PREFIX = os.path.join(tempfile.gettempdir(), "lightmysky-metrics-")


def on_starting(server):
    if not os.environ.get("METRICS_DIR"):
        os.environ["METRICS_DIR"] = tempfile.mkdtemp(prefix=os.path.basename(_METRICS_DIR_PREFIX))


def child_exit(server, worker):
    from lightmysky.lib.metricfiles import fold_exited

    fold_exited(os.environ["METRICS_DIR"], worker.pid)


def on_exit(server):
    if os.environ["METRICS_DIR"].startswith(_METRICS_DIR_PREFIX):
        shutil.rmtree(os.environ["METRICS_DIR"], ignore_errors=True)
