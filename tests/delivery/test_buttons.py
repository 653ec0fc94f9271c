"""Button tokens: unguessable, within Telegram's 64 bytes and Discord's custom id, and each
carrying its kind; a token made before kinds were written still finds its target."""

from __future__ import annotations

import re
from pathlib import Path

from bot.adapters.discord.ui import TOKEN_PATTERN
from bot.delivery.buttons import Buttons
from bot.schema import open_database


def test_a_token_carries_its_kind_and_fits_both_platforms(tmp_path: Path) -> None:
    buttons = Buttons(open_database(tmp_path / "frontdesk.db"))
    token = buttons.issue("meeting", "meeting-cancel:7", "cancel", "Cancel", "Cancel 1")
    assert token.startswith("meeting.") and len(token.encode()) <= 64
    assert re.fullmatch(TOKEN_PATTERN, token)
    target = buttons.find(token)
    assert target is not None
    assert (target.kind, target.run_id, target.wait_key, target.answer, target.label) == (
        "meeting", "meeting-cancel:7", "cancel", "Cancel", "Cancel 1")
    assert buttons.find(token[:-1] + ("A" if token[-1] != "A" else "B")) is None  # forged


def test_the_buttons_of_a_wait_are_run_buttons_one_per_option(tmp_path: Path) -> None:
    buttons = Buttons(open_database(tmp_path / "frontdesk.db"))
    shown = buttons.for_wait("m-1", {"key": "approval", "options": ["Approve", "Discard"]})
    assert [button.label for button in shown] == ["Approve", "Discard"]
    targets = [buttons.find(button.token) for button in shown]
    assert [(t.kind, t.answer) for t in targets if t] == [("run", "Approve"), ("run", "Discard")]
    assert len({button.token for button in shown}) == 2


def test_a_token_from_before_kinds_has_none_and_still_finds_its_target(tmp_path: Path) -> None:
    db = open_database(tmp_path / "frontdesk.db")
    db.writer.execute("INSERT INTO buttons (token, run_id, wait_key, answer, label, created_at)"
                      " VALUES ('Qm9vdGhlcjEyMzQ1Njc4OTA', 'pairing:telegram:5', 'pairing',"
                      " 'allow', 'Allow', 0)")
    target = Buttons(db).find("Qm9vdGhlcjEyMzQ1Njc4OTA")
    assert target is not None and target.kind == "" and target.run_id == "pairing:telegram:5"
