# Two commands do everything on a fresh machine:
#   make run        set up, migrate, seed and replay-verify a small bank, serve on http://127.0.0.1:8000
#   make test       set up, run the whole test suite
# and beside them:
#   make superuser  a staff account for the staff pages, in the settings `make run` uses
#   make lint       ruff (lint and format check) and mypy; CI runs it before the tests
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml scripts/system-packages.sh | cksum | cut -d' ' -f1)
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: setup run superuser test lint format bench clean

$(STAMP): pyproject.toml scripts/system-packages.sh
	bash scripts/system-packages.sh
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q ".[test]"
	$(BIN)/pip install -q --no-deps openenv-core==0.3.0  # see pyproject.toml's test list
	test -x .venv-openenv10/bin/python || $(PYTHON) -m venv .venv-openenv10  # OpenEnv 0.10's own (pyproject.toml)
	.venv-openenv10/bin/pip install -q openenv==0.10.0 ./arena_env
	rm -f $(VENV)/.installed-*
	touch $@

setup: $(STAMP)

# Local use: DEBUG on (a signing key and a bank secret made once and kept in var/), unless set otherwise.
run: export DEBUG ?= true
run: setup
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py puzzles generate --split test --per-type 10
	$(BIN)/python manage.py replay --split test --per-type 10 --unverified
	@echo ""
	@echo "Staff pages (studies, review, dashboard) need a staff account. Make one with"
	@echo "    make superuser"
	@echo "then sign in at http://$(HOST):$(PORT)/accounts/login/"
	@echo ""
	$(BIN)/python manage.py runserver $(HOST):$(PORT)

# A staff account where `make run` keeps its data: the same DEBUG default, so the same signing key
# and database in var/ (without DEBUG, manage.py needs a SECRET_KEY set). Asks for name and password.
superuser: export DEBUG ?= true
superuser: setup
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py createsuperuser

# The suite makes a throwaway SECRET_KEY of its own (settings.py, when run by pytest); DEBUG stays off.
# Two processes (pytest-xdist, each with its own test database and Redis database: tests/parallel.py)
# with work stealing (an idle process takes half of what the other has queued): from a clean clone on
# an idle 2-core machine, 11 min 39 s against about 20 in one process. `TEST_PROCESSES=0` runs one.
TEST_PROCESSES ?= 2
test: setup
	$(BIN)/python -m pytest -n $(TEST_PROCESSES) --dist worksteal

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: setup
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: setup
	$(BIN)/python bench/generation.py
	$(BIN)/python bench/verification.py
	$(BIN)/python bench/replay.py --workers 4 6
	$(BIN)/python bench/event_path.py
	$(BIN)/python bench/report.py
	$(BIN)/python bench/export.py
	$(BIN)/python bench/dashboard.py
	$(BIN)/python bench/staff_pages.py

clean:
	rm -rf $(VENV) .venv-openenv10 var .pytest_cache
