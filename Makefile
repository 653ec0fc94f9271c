# Frontdesk: `make run` starts the bot, `make test` checks everything CI checks.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck pytest bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/frontdesk run

lint: $(STAMP)
	$(VENV)/bin/ruff check bot graphs memory tests bench

typecheck: $(STAMP)
	$(VENV)/bin/mypy --strict bot graphs memory

pytest: $(STAMP)
	$(VENV)/bin/pytest

test: lint typecheck pytest

$(VENV)/.bench-installed: $(STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev,bench]'
	touch $@

bench: $(VENV)/.bench-installed
	for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
