"""Fixtures shared by several test folders: a real CalDAV server (``radicale``, from
tests/fakes/radicale_server.py), used by the calendar tests and the meetings' end-to-end test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.radicale_server import RadicaleServer


@pytest.fixture(scope="session")
def radicale(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RadicaleServer]:
    """A real CalDAV server (Radicale) on loopback for the whole session; each test makes its
    own calendar with ``radicale.new_calendar()``. A test that stops it starts it again."""
    with RadicaleServer(tmp_path_factory.mktemp("radicale")) as server:
        yield server
