"""The reference calendars and their expected windows (tests/data/ics, see SOURCES.md there),
and a real CalDAV server (``radicale``, from tests/fakes/radicale_server.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.radicale_server import RadicaleServer

ICS = Path(__file__).resolve().parent.parent / "data" / "ics"
WINDOWS: list[dict[str, Any]] = json.loads((ICS / "expected.json").read_text())
UNPARSEABLE = "test_with_multiple_tzids_in_vtimezone.ics"


@pytest.fixture(scope="session")
def radicale(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RadicaleServer]:
    """A real CalDAV server (Radicale) on loopback for the whole session; each test makes its
    own calendar with ``radicale.new_calendar()``. A test that stops it starts it again."""
    with RadicaleServer(tmp_path_factory.mktemp("radicale")) as server:
        yield server
