"""A database written by the main of before the one ``Database`` (baa684d) opens and serves.

``tests/data/frontdesk-baa684d.db`` was written by that commit's own code
(``git worktree add /tmp/base baa684d``, then with ``PYTHONPATH=/tmp/base``): ``assemble``
with the offline model, the console owner's "hello there" answered (an inbox row, a run, its
chat history), the note "The boiler service is on 3 May" and a reminder "call Ann" for
2030-01-02 09:00 UTC, every connection closed (so the file holds its WAL).
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from bot.adapters.console import OWNER_CHAT, console_message
from bot.app import assemble
from bot.config.settings import Settings
from bot.schema import foreign_objects, read_state
from sqlitedb import applied_migrations

OLD = Path(__file__).resolve().parent.parent / "data" / "frontdesk-baa684d.db"


def tables(path: Path) -> dict[str, str]:
    """Every table, index and trigger with its SQL, as stored."""
    conn = sqlite3.connect(path)
    try:
        return {name: sql for name, sql in conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")}
    finally:
        conn.close()


async def test_a_database_from_baa684d_opens_and_serves_unchanged(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    database = home / "frontdesk.db"
    shutil.copy(OLD, database)
    before = tables(database)
    recorded = applied_migrations(sqlite3.connect(OLD))
    state = read_state(database)
    assert not state.unknown and not state.problem  # nothing this version does not know
    settings = Settings.from_env({"FRONTDESK_HOME": str(home),
                                  "FRONTDESK_MODEL_PROVIDER": "offline",
                                  "FRONTDESK_MERGE_WINDOW": "0"})
    app = assemble(settings)
    try:
        after = tables(database)
        # every table as it was stored; only the migrations this version adds, if any
        assert {name: after[name] for name in before} == before
        applied = applied_migrations(app.db.reader)
        assert {name: applied[name] for name in recorded} == recorded
        assert set(applied) - set(recorded) == set(state.pending)
        [run] = app.flows.store.runs(limit=10)
        assert run.status == "completed" and run.workflow == "triage"
        assert [h.text for h in app.memory.search("owner", "boiler")] == [
            "The boiler service is on 3 May"]
        [reminder] = app.reminders.store.pending()
        assert reminder.text == "call Ann" and reminder.due.year == 2030
        assert [line for line in app.memory.history(f"console:chat:{OWNER_CHAT}")
                if line[0] == "user"] == [("user", "hello there")]
        await app.chat.gateway.start()
        reply = await app.chat.gateway.handle(console_message("hello again"))
        assert reply is not None and reply.text and reply.run_id != run.id
        assert len(app.flows.store.runs(limit=10)) == 2
        await app.close()
    finally:
        app.db.close()


def test_an_old_database_s_schema_is_exactly_what_its_migrations_make(tmp_path: Path) -> None:
    """Compared with the migrations it has applied (fewer than this version's), its FTS5 and
    SQLite's own tables included; the migrations table as made before versions were recorded
    too; and a trigger added to it is found."""
    database = tmp_path / "frontdesk.db"
    shutil.copy(OLD, database)
    conn = sqlite3.connect(database)
    try:
        assert read_state(database).pending and foreign_objects(conn) == []
        conn.execute("ALTER TABLE migrations DROP COLUMN version")  # as before 6dc5e23
        conn.execute("ANALYZE")  # SQLite's planner statistics: its own, harmless tables
        assert foreign_objects(conn) == []
        conn.execute("CREATE TRIGGER evil AFTER DELETE ON memory_notes BEGIN SELECT 1; END")
        assert foreign_objects(conn) == ["an extra trigger evil on memory_notes"]
    finally:
        conn.close()
