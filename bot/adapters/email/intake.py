"""Take in the desk's mail without losing or doubling one: record, answer, then mark seen.

Flags are not the record. Each look at the folder (``scan``) lists the unseen mails of the last
``ANSWER_WITHIN_DAYS`` and every mail past the last UID taken (one a person read in another
client is still answered); a UID already taken under this UIDVALIDITY is passed over. A folder
first met (a new desk, a reset UIDVALIDITY) starts past the mail it holds: what was read there
before the desk came is not answered. For a new one only the headers, the size
and the structure are fetched first; the UID is kept, then the mail is read (a mail over
FRONTDESK_MAX_FILE_MB is not downloaded: its sender gets one sentence), and its message is
recorded in the desk's inbox together with its thread, in one transaction, before any work (its
files declared as attachments the media pipeline fetches and caps: ``files.MailFiles``). A
Message-ID met before (a redelivery, a reset UIDVALIDITY, the same mail twice) is never
answered again. ``\\Seen`` is set only once the answer (or the owner's notice) has left: the
answering jobs hand their UIDs back to the loop, which marks them between two IDLEs.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import parseaddr

from bot.adapters.base import Adapter
from bot.adapters.chains import ChatChains
from bot.adapters.email.adapter import PLATFORM, EmailAdapter
from bot.adapters.email.mailbox import Head, Mailbox
from bot.adapters.email.reading import read_in_worker
from bot.adapters.email.rules import from_stranger, never_answer, reply_to_differs
from bot.adapters.email.threads import (
    ANSWER_WITHIN_DAYS,
    DONE,
    OPEN,
    TAKEN,
    Thread,
    Threads,
)
from bot.config.email_settings import EmailSettings
from bot.messages import Accepted, Inbound, IncomingMessage

log = logging.getLogger(__name__)
TOO_LARGE = ("Your mail was too large for me to read (over {mb:g} MB); please send it "
             "again without the large attachments, or with a link to them.")
MARK_AT_STOP_S = 5.0  # a stop marks what was answered; a server that does not answer waits


def parse(raw: bytes) -> EmailMessage:
    mail = BytesParser(policy=policy.default).parsebytes(raw)
    assert isinstance(mail, EmailMessage)
    return mail


def message_id_of(mail: EmailMessage) -> str:
    """The mail's Message-ID; one made of its headers when it has none (the same each time)."""
    given = str(mail.get("Message-ID", "")).strip()
    if given:
        return given
    digest = hashlib.sha256(mail.as_bytes()[:4096]).hexdigest()[:24]
    return f"<no-id.{digest}@frontdesk>"


def headed(subject: str, text: str) -> str:
    """What the desk reads: a new mail's subject, then its text; a reply ("Re: …") only its
    text, so an answer such as "2" to the desk's numbered times is read as typed."""
    if subject.strip().lower().startswith("re:") and text.strip():
        return text.strip()
    return f"Subject: {subject}\n\n{text}".strip()


def needs_approval(mail: EmailMessage, sender: str, settings: EmailSettings) -> bool:
    """A guest (not in FRONTDESK_EMAIL_ALLOWED), a forged domain (dmarc=fail), or a Reply-To
    elsewhere than From: the answer is a draft the owner approves. Headers only: the head's."""
    return not settings.allows(sender) or from_stranger(mail) or reply_to_differs(mail)


def stop_if_cancelled() -> None:
    """Raise the cancel (a stop) that an await returned past. Python 3.11's
    ``asyncio.wait_for``, which aioimaplib wraps around each command, returns the result when
    the task is cancelled in the instant the awaited thing finishes, and the cancel is lost:
    at a SIGTERM just after an answer had woken the loop, the loop served on and the process
    never exited. The task still counts the request (``cancelling``)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


class EmailIntake:
    """Reads the folder, records each mail once, answers it, and marks it seen after."""

    def __init__(self, mailbox: Mailbox, desk: Inbound[Adapter], adapter: EmailAdapter,
                 threads: Threads, settings: EmailSettings, max_bytes: int) -> None:
        self.mailbox = mailbox
        self.desk = desk
        self.adapter = adapter
        self.threads = threads
        self.settings = settings
        self.max_bytes = max_bytes
        # (UIDVALIDITY, UID, the thread to close or None): to be marked \Seen by the loop
        self.to_mark: list[tuple[str, int, Thread | None]] = []
        self.wake = asyncio.Event()  # the loop ends its IDLE to mark them
        self.chains = ChatChains()  # each chat's answers in order, chats side by side

    async def serve(self) -> None:
        """Look, mark, wait for news; again, until cancelled (or the connection fails). Once
        a day the records of long-closed mails are forgotten."""
        while True:
            stop_if_cancelled()
            await self.mark_answered()
            if (forgotten := self.threads.forget_when_due()) is not None:
                log.info("email: %d old records forgotten", forgotten)
            await self.scan()
            self.wake.clear()
            if not self.to_mark:
                stop_if_cancelled()  # else a lost cancel would wait out an IDLE (25 min)
                await self.mailbox.wait_for_news(self.settings.poll, self.wake)

    def after_recovery(self) -> None:
        """The mails a crash left open were answered at attach: mark them seen now."""
        for thread in self.threads.still_open():
            self.to_mark.append((thread.uidvalidity, thread.uid, thread))

    async def mark_answered(self) -> None:
        while self.to_mark:
            validity, uid = self.to_mark[0][:2]
            thread = self.to_mark[0][2]
            if validity == self.mailbox.uidvalidity:
                await self.mailbox.mark_seen(uid)
            self.adapter.files.forget(validity, uid)
            if thread is not None:
                self.threads.closed(thread)
            else:
                self.threads.take_uid(validity, uid, DONE)
            self.to_mark.pop(0)

    async def scan(self) -> None:
        validity = self.mailbox.uidvalidity
        if not self.threads.known_folder(validity):
            log.info("email: the folder (UIDVALIDITY %s) is new here: its mail up to UID %d is "
                     "passed over, bar what is unseen from the last %d days", validity,
                     self.mailbox.uid_next - 1, ANSWER_WITHIN_DAYS)
            self.threads.begin(validity, self.mailbox.uid_next - 1)
        since = (datetime.now(UTC) - timedelta(days=ANSWER_WITHIN_DAYS)).date()
        for uid in await self.mailbox.to_read(self.threads.last_uid(validity), since):
            stop_if_cancelled()
            if self.threads.uid_state(validity, uid) in {None, TAKEN}:
                await self.take(uid)  # an open one is marked by its answer's job
            self.threads.passed(validity, uid)

    async def take(self, uid: int) -> None:
        """One mail: its head, then (when small enough) its text; recorded, then answered."""
        validity = self.mailbox.uidvalidity
        head = await self.mailbox.head(uid)
        if head is None:  # expunged meanwhile
            self.threads.take_uid(validity, uid, DONE)
            return
        mail = parse(head.header)
        message_id = message_id_of(mail)
        known = self.threads.mail(message_id)
        if known is not None:  # the same mail again: answered once, only marked
            log.info("email %s arrived again (UID %s/%s); not answered twice", message_id,
                     validity, uid)
            self.to_mark.append((validity, uid, None))
            return
        self.threads.take_uid(validity, uid)
        sender_name, sender = parseaddr(str(mail.get("From", "")))
        sender = sender.lower()
        thread = Thread(message_id=message_id, address=sender or "unknown@invalid",
                        subject=str(mail.get("Subject", "")),
                        references=str(mail.get("References", "")),
                        reply_to=parseaddr(str(mail.get("Reply-To", "")))[1].lower(),
                        never=never_answer(mail, self.settings.address) or "",
                        uidvalidity=validity, uid=uid)
        if head.size > self.max_bytes:
            await self._too_large(thread, head)
            return
        raw = await self.mailbox.whole(uid)
        if raw is None:
            self.threads.take_uid(validity, uid, DONE)
            return
        text = await read_in_worker(raw, self.max_bytes)
        message = IncomingMessage(
            platform=PLATFORM, chat_id=thread.address, message_id=message_id,
            user_id=thread.address, user_name=sender_name or thread.address,
            text=headed(thread.subject, text.text), is_private=True,
            attachments=self.adapter.files.keep(validity, uid, text.attachments))
        # A draft the owner approves; never for a mail that is never answered (its urgent
        # notice still reaches the owner: a draft to a no-reply address helps no one).
        if not thread.never and needs_approval(mail, thread.address, self.settings):
            message = replace(message, needs_approval=True, reply_to=thread.reply_to)
        with self.threads.cursors.together():
            accepted = self.desk.accept(message)
            self.threads.opened(thread)
            self.threads.take_uid(validity, uid, OPEN)
        if accepted is not None:
            self.dispatch(accepted, thread)
        else:  # the inbox knew it (recorded before this adapter kept threads)
            self.to_mark.append((validity, uid, thread))

    async def _too_large(self, thread: Thread, head: Head) -> None:
        """One sentence to the sender (once: its Message-ID is the mail's), nothing read."""
        with self.threads.cursors.together():
            self.threads.opened(thread)
            self.threads.take_uid(thread.uidvalidity, thread.uid, OPEN)
        if not thread.never:
            text = TOO_LARGE.format(mb=self.max_bytes / 1_000_000)
            try:
                await self.adapter.reply(thread, text, (), f"too-large|{thread.message_id}")
            except Exception as exc:  # the day's share, a refusal: the mail is still closed
                log.warning("email: the too-large notice to %s was not sent (%s)",
                            thread.address, exc)
        self.to_mark.append((thread.uidvalidity, thread.uid, thread))

    def dispatch(self, accepted: Accepted, thread: Thread) -> None:
        """Answer in the background, after the correspondent's earlier mails."""
        self.chains.add(thread.address, lambda: self._answer(accepted, thread))

    async def _answer(self, accepted: Accepted, thread: Thread) -> None:
        try:
            await self.desk.process(accepted, gather=False)
        except Exception:
            log.exception("answering email %s failed; it stays open", thread.message_id)
            return
        self.threads.answered(thread)
        self.to_mark.append((thread.uidvalidity, thread.uid, thread))
        self.wake.set()

    async def drain(self) -> None:
        """Stop answering (a stop), then mark what was answered, for a few seconds at most.

        The sends under way have had the stop's grace to finish (``bot.cli.run.hold_sends``),
        which then holds every send: an answer still going would wait for its send forever.
        So it is cancelled, like Telegram's: its mail stays open and unseen, and is answered
        once after the next start. One whose answer left is marked seen and closed now (else
        the next start's first reply to its sender was threaded under it)."""
        await self.chains.cancel()
        try:
            self.mailbox.end_idle()
            await asyncio.wait_for(self.mark_answered(), MARK_AT_STOP_S)
        except Exception as exc:  # a broken connection: they are marked after the next start
            log.info("email: the answered mails were not marked seen at the stop (%s)",
                     type(exc).__name__)
