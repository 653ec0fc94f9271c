# Frontdesk: `make run` starts the bot, `make test` checks everything CI checks.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck docs pytest browser bench clean

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

# The docs site, strictly: a broken link or anchor between the pages fails (site/ is ignored).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

pytest: $(STAMP) browser
	$(VENV)/bin/pytest

# The dashboard's browser tests drive Debian's chromium (no test tool may download a browser).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium for the dashboard browser tests"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
	   chromium-driver >/dev/null) || echo "could not install chromium: browser tests will skip"; }

test: lint typecheck docs pytest

$(VENV)/.bench-installed: $(STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev,bench]'
	touch $@

bench: $(VENV)/.bench-installed
	for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
