"""FRONTDESK_KEEP_DAYS: what is older goes, what is open stays, and the file shrinks."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.config.settings import Settings
from bot.delivery.buttons import Buttons
from bot.delivery.drafts import DROPPED, SEND, Draft, Drafts, draft_id
from bot.delivery.inbox import Inbox
from bot.delivery.notifier import NoticeLog, Urgent
from bot.delivery.parts import OutboxParts
from bot.meetings.extras import MeetingExtras
from bot.models.costs import SpendLog
from bot.reminders.store import Reminders
from bot.retention.prune import prune
from bot.schema import open_database
from sqlitedb.database import Database

DAY = 86_400.0
NOW = time.time()
OLD = NOW - 100 * DAY  # past the default 90 days
FRESH = NOW - 1 * DAY


def add_run(db: Database, run_id: str, status: str, at: float, events: int = 2,
            size: int = 10) -> None:
    """A run started and (unless open) ended at ``at``, with events and a wait."""
    ended = None if status in ("running", "waiting") else at
    db.writer.execute("INSERT INTO runs (id, workflow, status, input, meta, max_steps,"
                      " started_at, updated_at, ended_at) VALUES (?, 'triage', ?, '{}', '{}',"
                      " 50, ?, ?, ?)", (run_id, status, at, at, ended))
    db.writer.executemany(
        "INSERT INTO run_events (run_id, seq, t, event, node, data) VALUES (?, ?, ?, 'x',"
        " NULL, ?)", [(run_id, seq, at, "d" * size) for seq in range(events)])
    wait_status = "open" if status == "waiting" else "answered"
    db.writer.execute("INSERT INTO run_waits (run_id, key, node, question, options, created_at,"
                      " status) VALUES (?, 'ok', 'approval', 'Send?', '[]', ?, ?)",
                      (run_id, at, wait_status))


def count(db: Database, table: str, where: str = "1") -> int:
    return int(db.reader.execute(f"SELECT COUNT(*) FROM {table} WHERE {where}").fetchone()[0])


def fill(db: Database) -> None:
    """Old and fresh rows in every table the retention looks at, and open ones among them."""
    add_run(db, "old-done", "completed", OLD)
    add_run(db, "old-waiting", "waiting", OLD)
    add_run(db, "fresh-done", "completed", FRESH)
    inbox = Inbox(db)
    for message_id, at in (("1", OLD), ("2", FRESH), ("3", OLD)):
        inbox.record("telegram", "10", message_id, "10", {"text": f"message {message_id}"})
        db.writer.execute("UPDATE inbox SET received_at = ? WHERE message_id = ?",
                          (at, message_id))
    for message_id in ("1", "2"):  # "3" is still open: never touched
        inbox.finish("telegram", "10", message_id, "answered", "quick_reply")
        db.writer.execute("UPDATE inbox SET done_at = received_at WHERE message_id = ?",
                          (message_id,))
    parts = OutboxParts(db)
    parts.enqueue("telegram", "10", "old-reply", ["a", "b"])
    parts.enqueue("telegram", "10", "unsent-reply", ["c"])
    db.writer.execute("UPDATE outbox SET created_at = ?", (OLD,))
    db.writer.execute("UPDATE outbox SET sent_at = ? WHERE reply_key = 'old-reply'", (OLD,))
    buttons = Buttons(db)
    buttons.issue("run", "old-done", "ok", "yes", "Yes")
    buttons.issue("run", "old-waiting", "ok", "yes", "Yes")
    buttons.issue("pairing", "pairing:telegram:7", "allow", "allow", "Allow")
    db.writer.execute("UPDATE buttons SET created_at = ?", (OLD,))
    old_log = SpendLog(db, clock=lambda: OLD)
    old_log.record(provider="p", model="m", role="big", purpose=None, input_tokens=10,
                   output_tokens=5, cost_usd=0.25)
    old_log.record(provider="p", model="m", role="big", purpose=None, input_tokens=1,
                   output_tokens=1, cost_usd=0.5)
    reminders = Reminders(db, clock=lambda: OLD - DAY)
    zone = datetime.now(UTC).astimezone().tzinfo or UTC
    gone = reminders.add("owner", "telegram", "10", "old", datetime.fromtimestamp(OLD, UTC),
                         zone=zone)
    db.writer.execute("UPDATE reminders SET status = 'done' WHERE id = ?", (gone.id,))
    reminders.add("owner", "telegram", "10", "ahead", datetime.now(UTC) + timedelta(days=3),
                  zone=zone)


@pytest.fixture
def home(tmp_path: Path) -> Settings:
    return Settings.from_env({"FRONTDESK_HOME": str(tmp_path)})


def test_backdated_rows_are_removed_and_open_ones_kept(home: Settings) -> None:
    with open_database(home.database) as db:
        fill(db)
        day = datetime.fromtimestamp(OLD).date().isoformat()
        spent_then = SpendLog(db).spent(day)
        result = prune(db, home)
        assert result.removed["runs"] == 1 and result.removed["run_events"] == 2
        assert {row[0] for row in db.reader.execute("SELECT id FROM runs")} == {
            "old-waiting", "fresh-done"}
        assert count(db, "run_waits", "run_id = 'old-waiting' AND status = 'open'") == 1
        # the answered old message: its key stays a day (Telegram may send it again), its
        # payload is gone; the open one is untouched
        assert result.removed["inbox_payloads"] == 1 and result.removed["inbox"] == 1
        assert count(db, "inbox", "message_id = '3' AND payload != '{}'") == 1
        assert count(db, "outbox") == 1 and count(db, "outbox", "reply_key = 'unsent-reply'")
        assert {row[0] for row in db.reader.execute("SELECT run_id FROM buttons")} == {
            "old-waiting", "pairing:telegram:7"}
        assert count(db, "costs_calls") == 0 and result.removed["costs_calls"] == 2
        assert SpendLog(db).spent(day) == spent_then == 0.75  # the day's total kept
        assert [row[0] for row in db.reader.execute("SELECT text FROM reminders")] == ["ahead"]


def test_an_inbox_key_is_forgotten_once_its_platform_cannot_send_it_again(
        home: Settings) -> None:
    with open_database(home.database) as db:
        fill(db)
        db.writer.execute("UPDATE inbox SET received_at = ?, done_at = ? WHERE message_id = '2'",
                          (NOW - DAY / 2, NOW - DAY / 2))
        prune(db, home, 0.25)  # twelve hours old: its payload goes, its key stays a day
        assert count(db, "inbox", "message_id = '2' AND payload = '{}'") == 1
        assert not Inbox(db).record("telegram", "10", "2", "10", {"text": "again"})
        db.writer.execute("UPDATE inbox SET received_at = ?, done_at = ? WHERE message_id = '2'",
                          (NOW - 2 * DAY, NOW - 2 * DAY))
        assert prune(db, home, 0.25).removed["inbox"] == 1  # past Telegram's 24 hours


def test_a_dry_run_removes_nothing_and_counts_what_would_go(home: Settings) -> None:
    with open_database(home.database) as db:
        fill(db)
        before = {table: count(db, table) for table in ("runs", "run_events", "inbox",
                                                        "outbox", "buttons", "costs_calls")}
        dry = prune(db, home, dry_run=True)
        assert {table: count(db, table) for table in before} == before
        assert count(db, "inbox", "payload = '{}'") == 0
        assert prune(db, home).removed == dry.removed and dry.total > 0


def test_the_file_shrinks_after_a_prune(home: Settings) -> None:
    with open_database(home.database) as db:
        assert db.writer.execute("PRAGMA auto_vacuum").fetchone()[0] == 2  # incremental
        for number in range(40):
            add_run(db, f"big-{number}", "completed", OLD, events=50, size=2_000)
        db.writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        result = prune(db, home)
        assert result.removed["run_events"] == 40 * 50
        assert result.bytes_after < result.bytes_before - 3_000_000
        assert result.bytes_after == home.database.stat().st_size  # the WAL folded in


def test_prune_json_and_bad_days(home: Settings, capsys: pytest.CaptureFixture[str],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FRONTDESK_HOME", str(home.home))
    with open_database(home.database) as db:
        fill(db)
    assert main(["prune", "--days", "0.5", "--dry-run", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert set(shown) == {"days", "before", "dry_run", "removed", "total", "database_bytes"}
    assert shown["days"] == 0.5 and shown["dry_run"] is True
    assert shown["removed"]["runs"] == 2 and shown["total"] == sum(shown["removed"].values())
    assert set(shown["database_bytes"]) == {"before", "after"}
    assert main(["prune"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Kept 90 days") and "runs" in out and "database:" in out
    with pytest.raises(SystemExit) as stop:
        main(["prune", "--days", "-3"])
    assert stop.value.code == 2
    monkeypatch.setenv("FRONTDESK_KEEP_DAYS", "soon")
    assert main(["prune"]) == 2
    assert "FRONTDESK_KEEP_DAYS='soon'" in capsys.readouterr().err


def add_meeting(db: Database, id_: str, status: str, uid: str, at: float) -> None:
    """A request as the meetings store keeps it, last changed and ending at ``at``."""
    db.writer.execute(
        "INSERT INTO meetings (id, run_id, status, guest, guest_name, platform, chat_id, topic,"
        " end_ts, uid, created_at, updated_at) VALUES (?, ?, ?, 'telegram:7', 'Bo',"
        " 'telegram', '7', 'review', ?, ?, ?, ?)", (id_, id_, status, at, uid, at, at))


def test_sent_notices_decided_drafts_and_pruned_meetings_extras_go(home: Settings) -> None:
    with open_database(home.database) as db:
        notices = NoticeLog(db)
        for key, notice, sent_at in (("old-sent", "n1", OLD), ("old-held", None, None),
                                     ("fresh-sent", "n2", FRESH)):
            notices.record(Urgent(key, "telegram:7", "Bo", "telegram", "help", OLD, notice,
                                  sent_at))
        drafts, buttons = Drafts(db), Buttons(db)
        for message_id, decision in (("1", DROPPED), ("2", SEND), ("3", None), ("4", SEND)):
            draft = drafts.keep(Draft(draft_id("email", "ann", message_id), "email", "ann",
                                      message_id, "ann", "Ann", "hi", "Hello Ann"))
            buttons.issue("draft", draft.id, "decide", "send", "Send")
            if decision is not None:
                drafts.decide(draft.id, decision, "owner")
        drafts.queued(draft_id("email", "ann", "2"))  # "4" was pressed but is not queued yet
        db.writer.execute("UPDATE drafts SET created_at = ?, decided_at = ?", (OLD, OLD))
        db.writer.execute("UPDATE buttons SET created_at = ?", (OLD,))
        add_meeting(db, "m-old", "cancelled", "u-old", OLD)
        add_meeting(db, "m-ahead", "booked", "u-ahead", NOW + 3 * DAY)
        extras = MeetingExtras(db)
        for uid in ("u-old", "u-ahead"):
            extras.link_for(uid, lambda: "https://meet.example/x")
        extras.moving("m-old-move", "m-old")
        extras.moving("m-ahead-move", "m-ahead")
        result = prune(db, home)
        assert result.removed["notices"] == 1
        assert notices.get("old-sent") is None
        assert notices.get("old-held") is not None and notices.get("fresh-sent") is not None
        assert result.removed["drafts"] == 2  # dropped, and queued: the outbox has its reply
        assert drafts.open_ids() == {draft_id("email", "ann", n) for n in ("3", "4")}
        assert {row[0] for row in db.reader.execute("SELECT run_id FROM buttons")} == \
            drafts.open_ids()
        assert (result.removed["meeting_events"], result.removed["meeting_moves"]) == (1, 1)
        assert extras.link("u-old") is None and extras.link("u-ahead") is not None
        assert extras.moves("m-old-move") is None and extras.moves("m-ahead-move") == "m-ahead"
