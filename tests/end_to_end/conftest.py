"""What the end-to-end meeting suites share: the fake Bot API with the owner's chat."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.telegram_server import FakeTelegramServer
from tests.support.telegram_process import OWNER


@pytest.fixture
def telegram() -> Iterator[FakeTelegramServer]:
    with FakeTelegramServer() as server:
        server.add_chat(OWNER)  # the owner's private chat, where approvals go
        yield server
