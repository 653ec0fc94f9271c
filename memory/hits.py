"""What a search returns: ``Hit``, one note or history line with its snippet and score.

Both searches (the exact one of memory/topk.py and the bounded one of memory/bounded.py) end
with ranked row ids; ``read_hits`` reads those rows back, checked against the scope once more,
and makes them hits in the order ranked.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from memory.rank import snippet
from memory.scopes import Table


@dataclass(frozen=True)
class Hit:
    """One note or history line; ``score`` is -bm25 (higher is better, 0 when not ranked)."""

    id: int
    text: str
    snippet: str
    score: float
    created_at: float


def read_hits(conn: sqlite3.Connection, table: Table, scope: str,
              ranked: list[tuple[float, int]], phrases: list[tuple[str, ...]]) -> list[Hit]:
    """The rows of these (score, id), in this order, with snippets."""
    rows = {row[0]: row[1:] for row in conn.execute(
        f"SELECT id, text, created_at FROM {table.rows} WHERE id IN "
        f"({','.join('?' * len(ranked))}) AND {table.owner_column} = ?",
        (*(note_id for _, note_id in ranked), scope))}
    return [Hit(id=note_id, text=rows[note_id][0], snippet=snippet(rows[note_id][0], phrases),
                score=score, created_at=rows[note_id][1])
            for score, note_id in ranked if note_id in rows]
