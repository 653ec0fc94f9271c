# Frontdesk: `make run` starts the bot, `make test` checks everything CI checks.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck pytest browser bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/frontdesk run

lint: $(STAMP)
	$(VENV)/bin/ruff check bot graphs memory sqlitedb tests bench

typecheck: $(STAMP)
	$(VENV)/bin/mypy --strict bot graphs memory sqlitedb

pytest: $(STAMP) browser
	$(VENV)/bin/pytest

# The dashboard's browser tests drive Debian's chromium (no test tool may download a browser).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium for the dashboard browser tests"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
	   chromium-driver >/dev/null) || echo "could not install chromium: browser tests will skip"; }

test: lint typecheck pytest

$(VENV)/.bench-installed: $(STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev,bench]'
	touch $@

bench: $(VENV)/.bench-installed
	for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
