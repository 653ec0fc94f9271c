# Frontdesk: `make run` starts the bot, `make test` checks everything CI checks.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

# uv when it is on the machine (the first install in seconds rather than minutes), else pip.
# `make run UV=` forces pip. Either way each step says what it does and shows the installer's
# own progress: the first install is never a silent minute.
ifeq ($(origin UV),undefined)
UV := $(shell command -v uv 2>/dev/null)
endif
ifdef UV
INSTALLER := uv
NEW_VENV := $(UV) venv --seed --python python3 $(VENV)
# uv writes no bytecode by default: every later start (each test's subprocess too) would then
# compile the SDKs' thousands of modules again where PYTHONDONTWRITEBYTECODE is set.
PIP_INSTALL := $(UV) pip install --compile-bytecode --python $(PY)
else
INSTALLER := pip
NEW_VENV := python3 -m venv $(VENV)
PIP_INSTALL := $(PY) -m pip install --disable-pip-version-check
endif

.PHONY: run test lint typecheck docs pytest browser systemd dovecot bench clean

$(STAMP): pyproject.toml
	@test -x $(PY) || { echo "== creating the virtualenv $(VENV) ($(INSTALLER))"; $(NEW_VENV); }
	@echo "== installing Frontdesk and its dev tools into $(VENV) with $(INSTALLER)" \
	  "(the first time: about a minute with pip, seconds with uv)"
	$(PIP_INSTALL) -e '.[dev]'
	@touch $(STAMP)
	@echo "== installed; next time \`make run\` starts at once"

run: $(STAMP)
	$(VENV)/bin/frontdesk run

lint: $(STAMP)
	$(VENV)/bin/ruff check bot graphs memory sqlitedb tests bench

typecheck: $(STAMP)
	$(VENV)/bin/mypy --strict bot graphs memory sqlitedb

# The docs site, strictly: a broken link or anchor between the pages fails (site/ is ignored).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

# Two test processes (pytest-xdist), one file at a time each: a file's tests share its
# fixtures and order, and most tests wait on servers and child processes, so two nearly
# halve the wall time on two cores. One file or test runs in one: `.venv/bin/pytest PATH`.
pytest: $(STAMP) browser systemd dovecot
	$(VENV)/bin/pytest -n 2 --dist loadfile

# The dashboard's browser tests drive Debian's chromium (no test tool may download a browser).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium for the dashboard browser tests"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
	   chromium-driver >/dev/null) || echo "could not install chromium: browser tests will skip"; }

# The email tests run Debian's Dovecot on loopback (a throw-away config, never the system's).
dovecot:
	@command -v dovecot >/dev/null 2>&1 || test -x /usr/sbin/dovecot || { \
	  echo "installing Debian's dovecot-imapd for the email tests"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	   dovecot-imapd >/dev/null) || echo "could not install dovecot-imapd: email tests will skip"; }

# The service tests check the unit with Debian's `systemd-analyze verify`.
systemd:
	@command -v systemd-analyze >/dev/null 2>&1 || { \
	  echo "installing Debian's systemd for the service tests (systemd-analyze verify)"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq systemd \
	   >/dev/null) || echo "could not install systemd: the unit checks will skip"; }

test: lint typecheck docs pytest

$(VENV)/.bench-installed: $(STAMP)
	@echo "== installing the benchmarks' extras into $(VENV) with $(INSTALLER)"
	$(PIP_INSTALL) -e '.[dev,bench]'
	touch $@

# Every benchmark in bench/, but not the modules they share (set-ups, fakes, the old rules).
BENCH_SHARED := bench/chaos_fakes.py bench/chaos_report.py bench/frontdesk_run.py \
  bench/legacy_intent_rules.py bench/legacy_intent_words.py bench/soak_run.py bench/writes.py
bench: $(VENV)/.bench-installed
	for b in $(filter-out $(BENCH_SHARED),$(wildcard bench/*.py)); do \
	  echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
