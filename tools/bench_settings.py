"""Settings for `make bench`: the site's own, plus the bench's URLs and template."""

from pathlib import Path

from lightmysky.settings import *  # noqa: F403
from lightmysky.settings import TEMPLATES

ROOT_URLCONF = "tools.bench_urls"
TEMPLATES[0]["DIRS"] = [*TEMPLATES[0]["DIRS"], Path(__file__).resolve().parent / "templates"]
