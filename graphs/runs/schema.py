"""The run tables' schema: every ``runs_*`` migration, in the one order they are applied.

``runs`` (one row a run), ``run_events`` (its append-only log: each event a row, a node
boundary's row also carrying what the node wrote and the frontier left to run), ``run_waits``
(the questions a run waits on) and ``run_steps`` (a code workflow's completed calls). Only
``graphs.runs`` reads or writes these tables.
"""

from __future__ import annotations

from sqlitedb import Migration

MIGRATIONS: list[Migration] = [
    ("runs_001_create", """
        CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            workflow TEXT NOT NULL,
            status TEXT NOT NULL,          -- running | waiting | completed | failed | cancelled
            input TEXT NOT NULL,           -- JSON: the state the run started from
            meta TEXT NOT NULL,            -- JSON: what the caller attached (chat, user...)
            max_steps INTEGER NOT NULL,
            route TEXT,                    -- the last route target taken
            error TEXT,
            started_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            ended_at REAL
        );
        CREATE INDEX runs_by_start ON runs (started_at);
        CREATE INDEX runs_by_status ON runs (status);
        CREATE TABLE run_events (
            run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            t REAL NOT NULL,
            event TEXT NOT NULL,
            node TEXT,
            data TEXT NOT NULL,            -- JSON: the event's other fields
            delta TEXT,                    -- JSON: what the node wrote (node boundaries)
            frontier TEXT,                 -- JSON: {"ready": [...], "waiting": {node: key},
                                           --  "visits": {node: n}}: the boundary's node's count
            UNIQUE (run_id, seq)
        );
        CREATE TABLE run_waits (
            run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            key TEXT NOT NULL,
            node TEXT NOT NULL,
            question TEXT NOT NULL,
            options TEXT NOT NULL,         -- JSON list
            created_at REAL NOT NULL,
            expires_at REAL,
            status TEXT NOT NULL,          -- open | answered | expired | cancelled
            answer TEXT,                   -- JSON
            answered_by TEXT,
            answered_at REAL,
            UNIQUE (run_id, key)
        );
        CREATE INDEX run_waits_open ON run_waits (status, expires_at);
    """),
    ("runs_flows_001_steps", """
        CREATE TABLE run_steps (
            run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            key TEXT NOT NULL,             -- stable: the name, or name[key_by], scoped by '/'
            kind TEXT NOT NULL,            -- agent | step | ask | cell | pipeline | parallel
            status TEXT NOT NULL,          -- running | waiting | done | failed | cancelled
            fingerprint TEXT NOT NULL,
            parts TEXT NOT NULL,           -- JSON: the hash of each fingerprinted part
            output TEXT,                   -- JSON: the saved output (status done)
            error TEXT,
            pipeline TEXT,                 -- a pipeline cell: its pipeline, item and stage
            item TEXT,
            stage TEXT,
            started_at REAL NOT NULL,
            ended_at REAL,
            PRIMARY KEY (run_id, key)
        );
        CREATE INDEX run_steps_cells ON run_steps (run_id, pipeline) WHERE pipeline IS NOT NULL;
    """),
    # An answer is "taken" once the run has used it (the node it woke finished, the code
    # workflow saved it as a step): answered but not taken is what a run still has to pick up.
    ("runs_002_taken", """
        ALTER TABLE run_waits ADD COLUMN taken_at REAL;
        CREATE INDEX run_waits_untaken ON run_waits (run_id) WHERE taken_at IS NULL
            AND status IN ('answered', 'expired');
    """),
    # A code workflow's step inside a group (a ``parallel`` fan-out): the group's key.
    ("runs_003_step_groups", """
        ALTER TABLE run_steps ADD COLUMN step_group TEXT;
    """),
    # The reply an answer owes its chat (a button press's outcome): found unsent after a
    # crash between the run's end and the reply being queued, it is queued at start.
    ("runs_004_reply_key", """
        ALTER TABLE run_waits ADD COLUMN reply_key TEXT;
    """),
    # Whose runs (the meta's ``user``) by start: a guest's messages this hour and spend today
    # are read per message (``bot.chat.guest_limits``), at the cost of that guest's runs only.
    ("runs_005_by_user", """
        CREATE INDEX runs_by_user ON runs (json_extract(meta, '$.user'), started_at);
    """),
    # The retention finds the runs that ended long ago (``RunStore.prune``) by their end.
    ("runs_006_by_end", """
        CREATE INDEX runs_by_end ON runs (ended_at) WHERE ended_at IS NOT NULL;
    """),
    # A status's runs newest first (the dashboard's filter, its waiting ones) with a million
    # runs in the table: read along the index, not sorted.
    ("runs_007_by_status_start", """
        CREATE INDEX runs_by_status_start ON runs (status, started_at);
    """),
]
