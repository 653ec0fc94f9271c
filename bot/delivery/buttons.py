"""Button tokens: the opaque, unguessable token an inline button sends back, and its kind.

A token stands for one answer to one wait (``ButtonTarget``) and carries its *kind* — which
handler takes its press: ``run`` (a run's wait), ``pairing`` (Allow / Block for a stranger),
``meeting`` (a booking's Cancel or Reschedule) — written into the token itself
(``kind.random``), so a press is dispatched by what the button is, not by the shape of a run
id, and the stored rows keep the format they always had. A token made before kinds were
written has none (``kind`` is ""): its handler is found by the run id it was made for, the one
place the old rule remains.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.messages import Button
from sqlitedb import transaction
from sqlitedb.database import Database

TOKEN_BYTES = 16  # 22 characters: with a kind, well inside Telegram's 64 bytes


@dataclass(frozen=True)
class ButtonTarget:
    """What an opaque button token stands for: an answer to one wait, and the button's kind."""

    run_id: str
    wait_key: str
    answer: str
    label: str
    kind: str = ""  # "" for a token made before kinds were written


class Buttons:
    """The ``buttons`` table."""

    def __init__(self, db: Database) -> None:
        self.conn = db.writer

    def issue(self, kind: str, run_id: str, wait_key: str, answer: str, label: str) -> str:
        """A new token of ``kind`` for one answer to one wait."""
        token = f"{kind}.{secrets.token_urlsafe(TOKEN_BYTES)}"
        self.conn.execute(
            "INSERT INTO buttons (token, run_id, wait_key, answer, label, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)", (token, run_id, wait_key, answer, label, time.time()))
        return token

    def for_options(self, kind: str, run_id: str, wait_key: str,
                    options: list[tuple[str, str]]) -> list[Button]:
        """One button per (answer, label), each with a token of its own."""
        return [Button(label, self.issue(kind, run_id, wait_key, answer, label))
                for answer, label in options]

    def for_wait(self, run_id: str, wait: dict[str, Any]) -> list[Button]:
        """One ``run`` button per option of a run's wait, labelled with the option."""
        options = [(str(option), str(option)) for option in wait.get("options") or []]
        return self.for_options("run", run_id, str(wait["key"]), options)

    def find(self, token: str) -> ButtonTarget | None:
        """What a pressed token means, or None for a forged or unknown one."""
        row = self.conn.execute(
            "SELECT run_id, wait_key, answer, label FROM buttons WHERE token = ?",
            (token[:64],)).fetchone()
        if row is None:
            return None
        kind = token.partition(".")[0] if "." in token else ""
        return ButtonTarget(str(row[0]), str(row[1]), str(row[2]), str(row[3]), kind)

    def prune(self, before: datetime, open_runs: set[str],
              open_drafts: set[str] | None = None) -> dict[str, int]:
        """Remove the run buttons made before ``before`` whose run is not in ``open_runs``
        (its wait is decided, or it ended), and the draft buttons whose draft is not in
        ``open_drafts``: a press on one says "not valid (anymore)", as it would have. Pairing
        and meeting buttons stay: a stranger may still be undecided, a booking still ahead.
        The rows removed."""
        rows = self.conn.execute(
            "SELECT token, run_id FROM buttons WHERE created_at < ?"
            " AND (token LIKE 'run.%' OR token LIKE 'draft.%')",
            (before.timestamp(),)).fetchall()
        still = {"run": open_runs, "draft": open_drafts or set()}
        gone = [(token,) for token, run_id in rows
                if run_id not in still[token.partition(".")[0]]]
        with transaction(self.conn):
            self.conn.executemany("DELETE FROM buttons WHERE token = ?", gone)
        return {"buttons": len(gone)}
