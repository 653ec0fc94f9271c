"""Fixtures shared by several test folders, each defined once.

Here: a real CalDAV server (``radicale``, from tests/fakes/radicale_server.py), used by the
calendar tests and the meeting's end-to-end test. From tests/support, registered as plugins:
the gateway harness (``home``, ``make_harness``, ``harness``), the in-process Telegram bot
(``telegram_server``, ``openai_fake``, ``start_telegram``) and the model fixtures (fake
provider servers, ``sleeps``, ``events``, ``db``, ``ledger``) and a headless ``chromium``.
A folder's own conftest.py, or a test module, may still define a fixture of the same name.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.radicale_server import RadicaleServer

pytest_plugins = ["tests.support.harness", "tests.support.telegram_bot", "tests.support.models",
                  "tests.support.browser"]


@pytest.fixture(scope="session")
def radicale(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RadicaleServer]:
    """A real CalDAV server (Radicale) on loopback for the whole session; each test makes its
    own calendar with ``radicale.new_calendar()``. A test that stops it starts it again."""
    with RadicaleServer(tmp_path_factory.mktemp("radicale")) as server:
        yield server
