"""A desk pointed at a mailbox with a past answers none of it, and its records do not grow."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.adapters.email.mailbox import Mailbox
from bot.adapters.email.threads import (
    ANSWER_WITHIN_DAYS,
    DONE,
    KEEP_CLOSED_DAYS,
    Thread,
    Threads,
)
from bot.config.email_settings import EmailSettings
from bot.delivery.cursors import Cursors
from bot.delivery.ledger import ledger_stores
from bot.schema import open_database
from tests.adapters.email.conftest import DeskProcess
from tests.support.mail_servers import DESK, PASSWORD, Dovecot, Smtp, mail

ANA = "Ana Lima <ana@example.com>"
DAY_S = 86_400.0


def test_a_new_desk_answers_recent_unseen_mail_only_and_leaves_the_flags_of_the_rest(
        dovecot: Dovecot, smtp: Smtp, desk_process: Callable[..., DeskProcess]) -> None:
    dovecot.deliver(mail(ANA, "Old thread", "Read long ago.", message_id="<read@example.com>"),
                    flags="(\\Seen)", days_ago=200)
    dovecot.deliver(mail(ANA, "Forgotten", "Never opened.", message_id="<stale@example.com>"),
                    days_ago=40)
    dovecot.deliver(mail(ANA, "This week", "Still waiting for you.",
                         message_id="<fresh@example.com>"), days_ago=3)
    dovecot.deliver(mail(ANA, "Read today", "Opened in another client before the desk came.",
                         message_id="<today-read@example.com>"), flags="(\\Seen)")
    desk = desk_process()
    desk.start()
    [reply] = smtp.wait_for(1)
    assert reply["In-Reply-To"] == "<fresh@example.com>"
    assert "is new here" in desk.log()
    dovecot.deliver(mail(ANA, "After", "And now?", message_id="<after@example.com>"))
    smtp.wait_for(2)  # the place kept at the start is where new mail is read from
    desk.poll(lambda: "\\Seen" in dovecot.flags().get("<after@example.com>", ""))
    assert [str(r["In-Reply-To"]) for r in smtp.received] == ["<fresh@example.com>",
                                                             "<after@example.com>"]
    assert "\\Seen" not in dovecot.flags()["<stale@example.com>"]  # left as it was


def cursors_in(folder: Path) -> Cursors:
    return ledger_stores(open_database(folder / "frontdesk.db")).cursors


def test_the_folder_lists_neither_its_last_mail_once_read_nor_old_unseen_mail(
        dovecot: Dovecot) -> None:
    """IMAP's "UID n:*" holds the last mail even when n is past it: a quiet mailbox would
    have its last mail answered again once its record was forgotten."""
    dovecot.deliver(mail(ANA, "Old", "Unread for months.", message_id="<old@x>"), days_ago=90)
    dovecot.deliver(mail(ANA, "Read", "Answered long ago.", message_id="<read@x>"),
                    flags="(\\Seen)")
    since = (datetime.now(UTC) - timedelta(days=ANSWER_WITHIN_DAYS)).date()

    async def listed(after_last: int) -> list[int]:
        mailbox = Mailbox(EmailSettings(DESK, "127.0.0.1", "127.0.0.1", imap_port=dovecot.port,
                                        security="none", username=DESK, password=PASSWORD))
        try:
            await mailbox.open()
            return await mailbox.to_read(mailbox.uid_next - 1 - after_last, since)
        finally:
            await mailbox.close()

    assert asyncio.run(listed(0)) == []
    assert asyncio.run(listed(1)) == [2]  # one past the place: the read one is newer
    dovecot.deliver(mail(ANA, "New", "Just now.", message_id="<new@x>"))
    assert asyncio.run(listed(1)) == [3]


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def test_closed_mails_are_forgotten_after_the_window_and_open_ones_never(
        tmp_path: Path) -> None:
    cursors = cursors_in(tmp_path)
    clock = Clock()
    threads = Threads(cursors, clock)
    old, recent, waiting = (Thread(message_id=f"<{name}@x>", address="ana@example.com",
                                   uidvalidity="7", uid=uid)
                            for uid, name in enumerate(("old", "recent", "waiting"), 1))
    for thread in (old, recent, waiting):
        with cursors.together():
            threads.opened(thread)
            threads.take_uid("7", thread.uid)
    threads.count_sent("ana@example.com")
    threads.closed(old)
    clock.now += 20 * DAY_S
    threads.closed(recent)
    threads.count_sent("ana@example.com")
    threads.begin("7", 3)
    clock.now += (KEEP_CLOSED_DAYS - 10) * DAY_S
    assert threads.forget_old() == 5  # the old mail, two closed places, two past days' counts
    assert threads.mail("<old@x>") is None
    assert threads.mail("<recent@x>") is not None
    assert threads.mail("<waiting@x>") is not None
    assert threads.uid_state("7", 3) is not None  # its place is kept while it is open
    assert threads.last_uid("7") == 3
    clock.now += 100 * DAY_S
    assert threads.forget_old() == 1  # the recent one, now old
    assert [t.message_id for t in threads.still_open()] == ["<waiting@x>"]
    assert cursors.with_prefix("email:sent:") == {}
    threads.closed(waiting)
    clock.now += (KEEP_CLOSED_DAYS + 1) * DAY_S
    assert threads.forget_old() == 4  # its mail and place, and what was kept of Ana
    assert [name for name in cursors.with_prefix("email:")] == ["email:last:7"]


def test_a_mail_closed_before_closings_were_dated_is_dated_then_forgotten(
        tmp_path: Path) -> None:
    cursors = cursors_in(tmp_path)
    clock = Clock()
    threads = Threads(cursors, clock)
    legacy = Thread(message_id="<legacy@x>", address="bo@example.com", state=DONE)
    cursors.set("email:mail:<legacy@x>", legacy.to_text())  # as an older desk left it
    assert threads.forget_old() == 0
    assert threads.mail("<legacy@x>") is not None
    clock.now += (KEEP_CLOSED_DAYS + 1) * DAY_S
    assert threads.forget_old() == 1
    assert threads.mail("<legacy@x>") is None
