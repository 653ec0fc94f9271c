"""The ledger's tables and their migrations: what nothing lost, nothing doubled rests on.

A message is recorded in the inbox *before* any work on it (``bot.delivery.inbox``); a reply
is written to the outbox as numbered parts before the first is sent (``bot.delivery.parts``);
a button press finds what its opaque token stands for (``bot.delivery.buttons``); an adapter
keeps its place in the cursors (``bot.delivery.cursors``); each run the gateway starts is
filed under its chat (``bot.delivery.run_chats``). Each of those is a small class owning its
tables; this module keeps their migrations, in the order they were first applied (their
names and SQL are what existing databases recorded: never edited; ``bot.schema`` applies
them with every other part's), and ``ledger_stores`` builds the five stores over the one
database.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.delivery.buttons import Buttons
from bot.delivery.cursors import Cursors
from bot.delivery.inbox import Inbox
from bot.delivery.parts import OutboxParts
from bot.delivery.run_chats import RunChats
from sqlitedb.database import Database

MIGRATIONS = [
    ("gateway_001_inbox", """
        CREATE TABLE inbox (
            platform TEXT NOT NULL,
            chat_id TEXT NOT NULL,
            message_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            payload TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'received',
            run_id TEXT,
            route TEXT,
            received_at REAL NOT NULL,
            done_at REAL,
            PRIMARY KEY (platform, chat_id, message_id)
        );
        CREATE INDEX inbox_open ON inbox (status) WHERE status = 'received';
    """),
    ("gateway_002_outbox", """
        CREATE TABLE outbox (
            id INTEGER PRIMARY KEY,
            platform TEXT NOT NULL,
            chat_id TEXT NOT NULL,
            reply_key TEXT NOT NULL,
            part_no INTEGER NOT NULL,
            parts INTEGER NOT NULL,
            text TEXT NOT NULL,
            buttons TEXT,
            created_at REAL NOT NULL,
            sent_at REAL,
            platform_message_id TEXT,
            UNIQUE (platform, chat_id, reply_key, part_no)
        );
        CREATE INDEX outbox_unsent ON outbox (platform) WHERE sent_at IS NULL;
    """),
    ("gateway_003_refusals_buttons_cursors", """
        CREATE TABLE refusals (
            platform TEXT NOT NULL,
            chat_id TEXT NOT NULL,
            refused_at REAL NOT NULL,
            PRIMARY KEY (platform, chat_id)
        );
        CREATE TABLE buttons (
            token TEXT PRIMARY KEY,
            run_id TEXT NOT NULL,
            wait_key TEXT NOT NULL,
            answer TEXT NOT NULL,
            label TEXT NOT NULL,
            created_at REAL NOT NULL
        );
        CREATE TABLE cursors (
            name TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
    """),
    ("gateway_004_failures_and_moved_chats", """
        ALTER TABLE inbox ADD COLUMN error TEXT;
        ALTER TABLE outbox ADD COLUMN failed_at REAL;
        ALTER TABLE outbox ADD COLUMN error TEXT;
        CREATE TABLE moved_chats (
            platform TEXT NOT NULL,
            chat_id TEXT NOT NULL,
            moved_to TEXT NOT NULL,
            moved_at REAL NOT NULL,
            PRIMARY KEY (platform, chat_id)
        );
    """),
    ("gateway_005_inbox_attempts", """
        ALTER TABLE inbox ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
    """),
    # The chat each run was started in: the gateway's own index of which chat waits on what
    # (the run layer keeps no chat notions). Runs answering messages are known already.
    ("gateway_006_run_chats", """
        CREATE TABLE run_chats (
            run_id TEXT PRIMARY KEY,
            platform TEXT NOT NULL,
            chat_id TEXT NOT NULL,
            started_at REAL NOT NULL
        );
        CREATE INDEX run_chats_of_chat ON run_chats (platform, chat_id);
        INSERT OR IGNORE INTO run_chats (run_id, platform, chat_id, started_at)
            SELECT run_id, platform, chat_id, received_at FROM inbox WHERE run_id IS NOT NULL;
    """),
    # FRONTDESK_KEEP_DAYS' prune, a batch at a time (bot.retention): each batch reads the rows
    # older than its cut-off along these, not the whole table
    ("gateway_007_prune_times", """
        CREATE INDEX inbox_by_done ON inbox (done_at);
        CREATE INDEX outbox_by_sent ON outbox (sent_at);
        CREATE INDEX run_chats_by_start ON run_chats (started_at);
    """),
]


@dataclass(frozen=True)
class LedgerStores:
    """The five stores over the ledger's tables, for the assembler to hand out one by one."""

    inbox: Inbox
    parts: OutboxParts
    buttons: Buttons
    cursors: Cursors
    run_chats: RunChats


def ledger_stores(db: Database) -> LedgerStores:
    """A store for each of the ledger's tables, over the one database (``open_database``
    brought them up to date)."""
    return LedgerStores(Inbox(db), OutboxParts(db), Buttons(db), Cursors(db), RunChats(db))
