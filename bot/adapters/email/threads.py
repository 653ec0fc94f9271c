"""What the email adapter keeps of each mail, durably, in its cursors (``AdapterCursors``).

- ``email:uid:<uidvalidity>:<uid>`` — the server's place of a mail, with its Message-ID: a UID
  looked at once per UIDVALIDITY (``taken`` while it is read, ``open`` once recorded, ``done``
  once marked seen).
- ``email:mail:<Message-ID>`` — the mail's thread (its sender, subject, references, Reply-To,
  why it is never answered) and its state: ``open`` until its answer (or the owner's notice)
  has left and ``\\Seen`` is set, then ``done``. A Message-ID met again (a redelivery, a reset
  UIDVALIDITY) is never answered a second time.
- ``email:open:<address>`` — that correspondent's open mails, oldest first: a reply sent to the
  address answers the first of them (each chat is answered in order, one turn at a time).
- ``email:sent:<date>:<address>`` — replies sent to one correspondent that day (UTC).
- ``email:last:<uidvalidity>`` — the highest UID looked at: a folder first met starts at the
  mail it holds then (``begin``), so a desk pointed at an old mailbox answers none of what was
  already read there.

The records do not grow for ever (``forget_old``, once a day: ``forget_when_due``): a mail
closed more than ``KEEP_CLOSED_DAYS`` ago is forgotten with its place, and so are a
correspondent's rows once none of their mail is left, and the counts of past days. The folder
is never asked for an unseen mail older than ``ANSWER_WITHIN_DAYS`` (by the server's arrival
date: ``Mailbox.to_read``), and every mail forgotten is older than that and marked seen, so no
mail is answered twice however long the desk runs; one marked unread again after a month is
left alone.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime

from bot.adapters.base import AdapterCursors

TAKEN = "taken"
OPEN = "open"
DONE = "done"
ANSWER_WITHIN_DAYS = 30  # an unseen mail that arrived longer ago is not answered
# A closed mail's record outlives that window by two days: IMAP's SINCE counts whole days in
# the server's zone, so a forgotten mail is surely older than the window's first day.
KEEP_CLOSED_DAYS = ANSWER_WITHIN_DAYS + 2
DAY_S = 86_400.0


@dataclass(frozen=True)
class Thread:
    """One received mail, as its reply needs it."""

    message_id: str
    address: str  # the sender, lower-cased: the chat and the user
    subject: str = ""
    references: str = ""
    reply_to: str = ""  # the Reply-To address when it differs from From
    never: str = ""  # why it is never answered ("" : it may be)
    uidvalidity: str = ""
    uid: int = 0
    state: str = "open"
    closed_at: float = 0.0  # when it was closed (epoch seconds); 0 while open

    @classmethod
    def from_text(cls, text: str) -> Thread:
        return cls(**json.loads(text))

    def to_text(self) -> str:
        return json.dumps(asdict(self))


class Threads:
    """The email adapter's records, on the cursors the assembler handed it."""

    def __init__(self, cursors: AdapterCursors,
                 clock: Callable[[], float] = time.time) -> None:
        self.cursors = cursors
        self.clock = clock
        self.forget_after = 0.0  # when ``forget_when_due`` next forgets (at once, then daily)

    # -- the server's places -----------------------------------------------------------------
    def uid_state(self, uidvalidity: str, uid: int) -> str | None:
        return self.cursors.get(f"email:uid:{uidvalidity}:{uid}")

    def take_uid(self, uidvalidity: str, uid: int, state: str = TAKEN) -> None:
        self.cursors.set(f"email:uid:{uidvalidity}:{uid}", state)

    def last_uid(self, uidvalidity: str) -> int:
        return int(self.cursors.get(f"email:last:{uidvalidity}") or 0)

    def known_folder(self, uidvalidity: str) -> bool:
        return self.cursors.get(f"email:last:{uidvalidity}") is not None

    def begin(self, uidvalidity: str, highest_uid: int) -> None:
        """A folder first met: what it holds now is passed over, bar its recent unseen mail."""
        self.cursors.set(f"email:last:{uidvalidity}", str(max(0, highest_uid)))

    def passed(self, uidvalidity: str, uid: int) -> None:
        if uid > self.last_uid(uidvalidity):
            self.cursors.set(f"email:last:{uidvalidity}", str(uid))

    # -- the mails ------------------------------------------------------------------------------
    def mail(self, message_id: str) -> Thread | None:
        text = self.cursors.get(f"email:mail:{message_id}")
        return Thread.from_text(text) if text else None

    def opened(self, thread: Thread) -> None:
        """Keep a mail as open, the last of its sender's (call inside ``together``)."""
        self.cursors.set(f"email:mail:{thread.message_id}", thread.to_text())
        waiting = self._open_ids(thread.address)
        if thread.message_id not in waiting:
            waiting.append(thread.message_id)
        self.cursors.set(f"email:open:{thread.address}", json.dumps(waiting))
        self.cursors.set(f"email:latest:{thread.address}", thread.message_id)

    def answered(self, thread: Thread) -> None:
        """The mail's answer has left (not yet marked seen): the sender's next reply answers
        their next mail, even before the loop has marked this one."""
        waiting = [id_ for id_ in self._open_ids(thread.address) if id_ != thread.message_id]
        self.cursors.set(f"email:open:{thread.address}", json.dumps(waiting))

    def closed(self, thread: Thread) -> None:
        """The mail's answer has left and it is marked seen: done."""
        with self.cursors.together():
            self.cursors.set(f"email:mail:{thread.message_id}",
                             replace(thread, state=DONE, closed_at=self.clock()).to_text())
            self.answered(thread)
            self.take_uid(thread.uidvalidity, thread.uid, DONE)

    def still_open(self) -> list[Thread]:
        """Every mail not yet closed (a crash or a stop came between its record and its mark)."""
        found = [Thread.from_text(text)
                 for text in self.cursors.with_prefix("email:mail:").values()]
        return [thread for thread in found if thread.state != DONE]

    def answering(self, address: str) -> Thread | None:
        """The mail a reply to ``address`` answers: its oldest open one, else its latest."""
        waiting = self._open_ids(address)
        latest = self.cursors.get(f"email:latest:{address}")
        for message_id in [*waiting, *([latest] if latest else [])]:
            if (thread := self.mail(message_id)) is not None:
                return thread
        return None

    def replying_to(self, address: str) -> Thread | None:
        """An approved draft sent to a mail's Reply-To: that mail's thread, addressed there."""
        for text in self.cursors.with_prefix("email:mail:").values():
            thread = Thread.from_text(text)
            if thread.reply_to and thread.reply_to == address:
                return replace(thread, address=address)
        return None

    def _open_ids(self, address: str) -> list[str]:
        ids: list[str] = json.loads(self.cursors.get(f"email:open:{address}") or "[]")
        return ids

    def forget_when_due(self) -> int | None:
        """``forget_old`` once a day (the first call at once; a reconnect does not count as a
        new day): how many records went, or None when it was not yet due."""
        if self.clock() < self.forget_after:
            return None
        self.forget_after = self.clock() + DAY_S
        return self.forget_old()

    def forget_old(self) -> int:
        """Forget the mails closed more than ``KEEP_CLOSED_DAYS`` ago, the places of closed
        mails (their Message-IDs are what keeps a mail from being answered twice), what is
        kept of a correspondent with no mail left, and the counts of past days; how many
        records went. A mail closed before closings were dated is dated now, and forgotten
        that much later."""
        now = self.clock()
        cutoff = now - KEEP_CLOSED_DAYS * DAY_S
        gone: list[str] = []
        with self.cursors.together():
            kept: set[str] = set()  # the Message-IDs still recorded
            for name, text in self.cursors.with_prefix("email:mail:").items():
                thread = Thread.from_text(text)
                if thread.state == DONE and not thread.closed_at:
                    self.cursors.set(name, replace(thread, closed_at=now).to_text())
                if thread.state == DONE and thread.closed_at and thread.closed_at < cutoff:
                    gone.append(name)
                else:
                    kept.add(thread.message_id)
            gone += [name for name, state in self.cursors.with_prefix("email:uid:").items()
                     if state == DONE]
            gone += [name for name, ids in self.cursors.with_prefix("email:open:").items()
                     if ids == "[]"]
            gone += [name for name, message_id in self.cursors.with_prefix("email:latest:")
                     .items() if message_id not in kept]
            today = self._sent_key("")
            gone += [name for name in self.cursors.with_prefix("email:sent:") if name < today]
            self.cursors.forget(gone)
        return len(gone)

    # -- the day's replies -----------------------------------------------------------------------
    def sent_today(self, address: str) -> int:
        return int(self.cursors.get(self._sent_key(address)) or 0)

    def count_sent(self, address: str) -> None:
        self.cursors.set(self._sent_key(address), str(self.sent_today(address) + 1))

    def _sent_key(self, address: str) -> str:
        day = datetime.fromtimestamp(self.clock(), UTC).date().isoformat()
        return f"email:sent:{day}:{address}"
