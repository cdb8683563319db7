# LightMySky: `make run` starts the site, `make test` runs every test. Both set everything up first.

VENV := .venv
BIN := $(VENV)/bin
# The first interpreter that really runs and is Python 3.12 or newer (pyenv shims may exist but fail).
PYTHON_CANDIDATES := python3.13 python3.12 python3 \
	$(wildcard $(HOME)/.pyenv/versions/3.13*/bin/python3.13) \
	$(wildcard $(HOME)/.pyenv/versions/3.12*/bin/python3.12) \
	$(wildcard /root/.pyenv/versions/3.13*/bin/python3.13) \
	$(wildcard /root/.pyenv/versions/3.12*/bin/python3.12) \
	/usr/bin/python3.13 /usr/bin/python3.12 /usr/local/bin/python3.13 /usr/local/bin/python3.12
PYTHON := $(shell for p in $(PYTHON_CANDIDATES); do \
	"$$p" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1 && { echo "$$p"; break; }; done)

# Local runs are in debug mode; production sets its own environment (see .env.example).
export DEBUG ?= 1

.PHONY: setup run test screenshots bench admin-timing wrk simulate crash-check upgrade-check lighthouse lint clean \
	python-path

$(BIN)/python:
	@test -n "$(PYTHON)" || { echo "Python 3.12 or newer is needed and none was found." >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Reinstall only when the declared dependencies change.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --editable . --group dev
	@touch $@

setup: $(VENV)/.installed
	$(BIN)/python manage.py migrate --no-input -v 0
	$(BIN)/python manage.py load_demo --if-empty

run: setup
	$(BIN)/python manage.py runserver 127.0.0.1:8000

# One process a core (pytest-xdist). Each runs its tests in the order collected, so, as in one
# process, the tests that empty the database (the live server's) come after those that roll back:
# the data the migrations made (the Editors group) is there for the latter. PYTEST_ARGS='-n 0'
# runs them all in this process (for a debugger).
test: setup
	$(BIN)/python -m pytest -n auto $(PYTEST_ARGS)

# Refresh the pictures in docs/screenshots/ from the demo, drawn by Chromium.
screenshots: setup
	LIGHTMYSKY_SCREENSHOTS=1 REQUIRE_BROWSER=1 $(BIN)/python -m pytest -q tests/browser/test_screenshots.py

# Speed and size figures (wrk from Debian's packages drives the load).
bench: setup wrk
	$(BIN)/python -m tools.bench

# Every admin list and change page at the 1,250-lesson catalogue, timed (budget: under 1 s).
admin-timing: $(VENV)/.installed
	$(BIN)/python -m tools.admin_timing

# The scheduler and star rule on simulated learners for 90 days (docs/simulation.md); no database.
simulate: $(VENV)/.installed
	$(BIN)/python -m tools.simulate

# The load generator the bench drives the site with, from Debian's packages.
wrk:
	@command -v wrk >/dev/null || (apt-get update -qq && apt-get install -y -qq wrk >/dev/null) \
		|| { echo "the bench needs wrk: apt-get install wrk" >&2; exit 1; }

# kill -9 of PostgreSQL under an answer load loses no acknowledged answer (its own cluster, as root).
crash-check: setup
	$(BIN)/python -m tools.crash_check

# Upgrades under an answer load: a reload's longest wait for an answer, and the phased upgrade of
# two servers with a migration of each kind the policy allows; no answer refused or lost
# (PostgreSQL on DATABASE_URL's server, by default postgres@127.0.0.1:5432).
upgrade-check: $(VENV)/.installed
	$(BIN)/python -m tools.upgrade_check

# Lighthouse's four scores for the budget's pages (npm fetches Lighthouse; Debian's Chromium runs it).
lighthouse: setup
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) \
		|| { echo "make lighthouse needs Chromium: apt-get install chromium" >&2; exit 1; }
	$(BIN)/python -m tools.lighthouse

lint: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

clean:
	rm -rf $(VENV) staticfiles *.egg-info

# The Python 3.12+ that setup uses (for scripts such as .ci/deploy-check).
python-path:
	@echo $(PYTHON)
