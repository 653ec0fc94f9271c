"""The schema of notes and chat history: ordered ``memory_`` migrations (see memory/db.py).

Each table has an FTS5 index kept in step by triggers, with the unicode61 tokenizer folding
case and diacritics (``remove_diacritics 2``), so "cafe" finds "Café".
"""

from __future__ import annotations

from memory import impact
from sqlitedb import Migration

MIGRATIONS: list[Migration] = [
    ("memory_001_scopes", """
        CREATE TABLE memory_scopes (
            scope TEXT PRIMARY KEY,
            number INTEGER NOT NULL UNIQUE,
            last_note INTEGER NOT NULL DEFAULT 0,
            last_history INTEGER NOT NULL DEFAULT 0
        );
        INSERT INTO memory_scopes (scope, number) VALUES ('owner', 0);
    """),
    ("memory_002_notes", """
        CREATE TABLE memory_notes (
            id INTEGER PRIMARY KEY,
            scope TEXT NOT NULL,
            text TEXT NOT NULL,
            created_at REAL NOT NULL
        );
        CREATE VIRTUAL TABLE memory_notes_fts USING fts5(
            text, content='memory_notes', content_rowid='id',
            tokenize='unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER memory_notes_ai AFTER INSERT ON memory_notes BEGIN
            INSERT INTO memory_notes_fts (rowid, text) VALUES (new.id, new.text);
        END;
        CREATE TRIGGER memory_notes_ad AFTER DELETE ON memory_notes BEGIN
            INSERT INTO memory_notes_fts (memory_notes_fts, rowid, text)
                VALUES ('delete', old.id, old.text);
        END;
    """),
    ("memory_003_history", """
        CREATE TABLE memory_history (
            id INTEGER PRIMARY KEY,
            chat TEXT NOT NULL,
            role TEXT NOT NULL,
            text TEXT NOT NULL,
            created_at REAL NOT NULL
        );
        CREATE VIRTUAL TABLE memory_history_fts USING fts5(
            text, content='memory_history', content_rowid='id',
            tokenize='unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER memory_history_ai AFTER INSERT ON memory_history BEGIN
            INSERT INTO memory_history_fts (rowid, text) VALUES (new.id, new.text);
        END;
        CREATE TRIGGER memory_history_ad AFTER DELETE ON memory_history BEGIN
            INSERT INTO memory_history_fts (memory_history_fts, rowid, text)
                VALUES ('delete', old.id, old.text);
        END;
    """),
    # A note saved by a tool call is keyed by that call (run, node visit, call id): the same
    # call done again after a crash finds its note instead of saving a second one.
    ("memory_004_effects", """
        CREATE TABLE memory_effects (
            key TEXT PRIMARY KEY,
            note_id INTEGER NOT NULL
        );
    """),
    # The impact index (memory/impact.py) that ranks notes exactly; the notes already
    # saved are indexed as it is created.
    ("memory_005_impact", impact.create),
]
