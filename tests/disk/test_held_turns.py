"""A message recorded before the disk filled is held, not failed, and answered once there is
room: in-process, the gateway over a database on a real small tmpfs the test fills."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.config.disk import disk_full
from tests.disk.small_disk import fill, small_disk
from tests.support.harness import OWNER, OWNER_CHAT, HarnessFactory, until


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    """FRONTDESK_HOME on an 8 MB tmpfs (the harness fixtures build on it)."""
    with small_disk(tmp_path / "home", "8m") as mounted:
        yield mounted


def inbox_row(conn: sqlite3.Connection, message_id: str) -> tuple[str, int]:
    row = conn.execute("SELECT status, attempts FROM inbox WHERE message_id = ?",
                       (message_id,)).fetchone()
    return str(row[0]), int(row[1])


async def test_a_recorded_message_is_held_while_full_and_answered_once_after(
        make_harness: HarnessFactory, home: Path) -> None:
    harness = await make_harness()
    disk = harness.services.delivery.disk
    conn = harness.services.db.writer
    msg = harness.message("hello there")
    accepted = harness.gateway.accept(msg)  # recorded while there was room
    assert accepted is not None

    filler = fill(home)
    with pytest.raises(Exception) as stopped:
        await harness.gateway.process(accepted, gather=False)
    assert disk_full(stopped.value)
    assert disk.full and inbox_row(conn, msg.message_id)[0] == "received"
    assert harness.adapter.to(OWNER) == []  # no "sorry, it failed": nothing to show yet
    await until(lambda: disk.told)
    [notice] = harness.adapter.to(OWNER_CHAT)
    assert "The disk is full" in notice
    second = harness.message("a second one while full")  # not recorded: not accepted
    with pytest.raises(Exception) as refused:
        harness.gateway.accept(second)
    assert disk_full(refused.value) and disk.refused >= 2

    filler.unlink()
    await until(lambda: not disk.full, timeout=15)  # the probe found room
    await disk.settled()
    assert len(harness.adapter.to(OWNER)) == 1  # answered, once
    assert inbox_row(conn, msg.message_id) == ("answered", 1)  # a full disk is no crash
    assert harness.adapter.to(OWNER_CHAT) == [notice]  # one notice for the episode
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
