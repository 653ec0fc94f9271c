"""The chat index: each run the gateway starts, filed under the chat it was started in.

The run layer keeps no chat notions; this index is how a typed answer finds the question its
chat is waiting on, and how a guest's typed pick finds their own offer.
"""

from __future__ import annotations

import time
from datetime import datetime

from sqlitedb import transaction
from sqlitedb.database import Database


class RunChats:
    """The ``run_chats`` table."""

    def __init__(self, db: Database) -> None:
        self.conn = db.writer

    def file(self, run_id: str, platform: str, chat_id: str) -> None:
        """File a run under the chat it was started in (once; a restart files it again)."""
        self.conn.execute(
            "INSERT OR IGNORE INTO run_chats (run_id, platform, chat_id, started_at)"
            " VALUES (?, ?, ?, ?)", (run_id, platform, chat_id, time.time()))

    def of_chat(self, platform: str, chat_id: str) -> set[str]:
        """The ids of the runs started in this chat."""
        rows = self.conn.execute("SELECT run_id FROM run_chats WHERE platform = ? AND"
                                 " chat_id = ?", (platform, chat_id))
        return {row[0] for row in rows}

    def prune(self, before: datetime, open_runs: set[str]) -> dict[str, int]:
        """Remove the filings of runs started before ``before`` that are not in ``open_runs``
        (a run still waiting keeps its chat, however old). The rows removed."""
        rows = self.conn.execute("SELECT run_id FROM run_chats WHERE started_at < ?",
                                 (before.timestamp(),)).fetchall()
        gone = [(run_id,) for (run_id,) in rows if run_id not in open_runs]
        with transaction(self.conn):
            self.conn.executemany("DELETE FROM run_chats WHERE run_id = ?", gone)
        return {"run_chats": len(gone)}
