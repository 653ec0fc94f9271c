"""The desk's IMAP mailbox: log in, list what is to be read, fetch a mail's head or whole, mark
it seen, and wait for news (IDLE, else a poll).

Built on ``aioimaplib``: an asyncio client, so the mailbox waits on the event loop beside
Telegram and Discord instead of holding a worker thread for each IDLE (``imap-tools`` is
synchronous: a thread per mailbox, blocked for up to 29 minutes at a time, which the worker
pool is too small to give), and it speaks IDLE itself (``idle_start``/``wait_server_push``),
where the standard library's ``imaplib`` has none. Its one gap, STARTTLS, is filled here: the
command sent through its ``execute``, then ``loop.start_tls`` on its own transport, and the
capabilities asked again. A certificate the client does not trust is refused by name
(``untrusted``), for SMTP too. An IDLE is ended and issued again within 29 minutes
(RFC 2177: servers may drop an IDLE after 30).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import ssl
from dataclasses import dataclass
from datetime import date
from typing import Any

import aioimaplib

from bot.config.email_settings import EmailSettings

IDLE_RENEW_S = 25 * 60  # an IDLE is re-issued well within the 29 minutes servers allow
_UIDVALIDITY = re.compile(rb"UIDVALIDITY (\d+)")
_UIDNEXT = re.compile(rb"UIDNEXT (\d+)")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_SIZE = re.compile(rb"RFC822\.SIZE (\d+)")
_UID = re.compile(rb"UID (\d+)")


class MailboxRefused(Exception):
    """The server refused the login or the folder: the sentence names the variable to fix."""


@dataclass(frozen=True)
class Head:
    """A mail's header block and its size, fetched before the body is."""

    uid: int
    header: bytes
    size: int
    structure: bytes  # the BODYSTRUCTURE line, as the server gave it


class Mailbox:
    """One IMAP connection to the desk's folder."""

    def __init__(self, settings: EmailSettings, *, timeout: float = 30.0) -> None:
        self.settings = settings
        self.timeout = timeout
        self.client: aioimaplib.IMAP4 | None = None
        self.uidvalidity = ""
        self.uid_next = 0  # the UID the folder's next mail gets (0: the server did not say)
        self.idle = False  # the server offers IDLE
        self.idling = False  # an IDLE was sent and its DONE not yet

    async def open(self) -> None:
        """Connect, log in, select the folder; MailboxRefused names what to fix."""
        email = self.settings
        context = ssl.create_default_context()
        if email.security == "tls":
            client: aioimaplib.IMAP4 = aioimaplib.IMAP4_SSL(
                host=email.imap_host, port=email.imap_port, timeout=self.timeout,
                ssl_context=context)
        else:
            client = aioimaplib.IMAP4(host=email.imap_host, port=email.imap_port,
                                      timeout=self.timeout)
        self.client = client
        try:
            await client.wait_hello_from_server()
            if email.security == "starttls":
                await self._start_tls(client, context)
        except ssl.SSLCertVerificationError as exc:  # an OSError: named before the others
            raise MailboxRefused(untrusted("IMAP", email.imap_host, exc)) from None
        except (TimeoutError, OSError) as exc:
            raise MailboxRefused(
                f"the IMAP server {email.imap_host}:{email.imap_port} cannot be reached "
                f"({type(exc).__name__}): check FRONTDESK_EMAIL_IMAP_HOST and "
                "FRONTDESK_EMAIL_IMAP_PORT") from None
        login = await client.login(email.username, email.password)
        if login.result != "OK":
            said = b" ".join(bytes(line) for line in login.lines).decode(errors="replace")
            raise MailboxRefused(
                f"the IMAP server refused the login of {email.username} ({said[:120]}): check "
                "FRONTDESK_EMAIL_PASSWORD (and FRONTDESK_EMAIL_USERNAME)")
        await client.protocol.capability()
        self.idle = client.has_capability("IDLE")
        chosen = await client.select(email.folder)
        if chosen.result != "OK":
            raise MailboxRefused(f"the IMAP server has no folder {email.folder!r}: check "
                                 "FRONTDESK_EMAIL_FOLDER")
        self.uidvalidity = _said(chosen.lines, _UIDVALIDITY) or "0"
        self.uid_next = int(_said(chosen.lines, _UIDNEXT) or 0)

    async def _start_tls(self, client: aioimaplib.IMAP4, context: ssl.SSLContext) -> None:
        protocol = client.protocol
        # STARTTLS through ``execute``: aioimaplib knows the command (NONAUTH, synchronous)
        # but ``simple_command`` refuses it (NotImplementedError: every STARTTLS login
        # failed so, until tests/adapters/email/test_tls.py ran one against Dovecot)
        command = aioimaplib.Command("STARTTLS", protocol.new_tag(), loop=protocol.loop)
        answer = await asyncio.wait_for(protocol.execute(command), self.timeout)
        if answer.result != "OK":
            raise MailboxRefused("the IMAP server refused STARTTLS: set "
                                 "FRONTDESK_EMAIL_SECURITY=tls (and the TLS port, 993)")
        loop = asyncio.get_running_loop()
        # the same protocol object reads and writes on: start_tls wraps the old transport,
        # and every later write goes through protocol.transport, set here
        protocol.transport = await asyncio.wait_for(loop.start_tls(
            protocol.transport, protocol, context, server_hostname=self.settings.imap_host),
            self.timeout)
        # RFC 3501 6.2.1: what the server offered before TLS is forgotten, asked again
        await asyncio.wait_for(protocol.capability(), self.timeout)

    @property
    def _imap(self) -> aioimaplib.IMAP4:
        assert self.client is not None, "Mailbox.open first"
        return self.client

    async def to_read(self, after_uid: int, since: date) -> list[int]:
        """The UIDs to look at: every unseen mail that arrived on ``since`` or later, and every
        mail past ``after_uid`` (seen in another client, never answered here), oldest first."""
        day = f"{since.day}-{MONTHS[since.month - 1]}-{since.year}"  # RFC 3501's date
        unseen = await self._imap.uid_search(f"UNSEEN SINCE {day}", charset=None)
        newer = await self._imap.uid_search(f"UID {after_uid + 1}:*", charset=None)
        # "UID n:*" always holds the folder's last mail, even when n is past it (RFC 3501
        # 6.4.8: * is the highest UID, and n:* is *:n): only the truly newer ones are kept
        listed = {uid for uid in _uids(newer.lines) if uid > after_uid} | _uids(unseen.lines)
        return sorted(uid for uid in listed if uid > 0)

    async def head(self, uid: int) -> Head | None:
        """A mail's headers, size and structure (its body stays on the server); None if gone."""
        answer = await self._imap.uid("fetch", str(uid),
                                      "(RFC822.SIZE BODYSTRUCTURE BODY.PEEK[HEADER])")
        lines = list(answer.lines)
        for index, line in enumerate(lines):
            text = bytes(line)
            size = _SIZE.search(text)
            uid_found = _UID.search(text)
            if size and uid_found and int(uid_found.group(1)) == uid \
                    and index + 1 < len(lines):
                return Head(uid, bytes(lines[index + 1]), int(size.group(1)), text)
        return None

    async def whole(self, uid: int) -> bytes | None:
        """A mail as the server keeps it, without setting ``\\Seen``; None if gone."""
        answer = await self._imap.uid("fetch", str(uid), "(BODY.PEEK[])")
        lines = list(answer.lines)
        for index, line in enumerate(lines):
            if b"BODY[]" in bytes(line) and index + 1 < len(lines):
                return bytes(lines[index + 1])
        return None

    async def mark_seen(self, uid: int) -> None:
        await self._imap.uid("store", str(uid), "+FLAGS", "(\\Seen)")

    async def wait_for_news(self, poll: float, wake: asyncio.Event,
                            renew: float = IDLE_RENEW_S) -> None:
        """Return when the folder may have changed: at the server's word (IDLE, re-issued
        after ``renew`` seconds), after ``poll`` seconds where it has no IDLE, or when
        ``wake`` is set (the desk has mail to mark: no command may go while IDLE lasts)."""
        if not self.idle:  # asyncio.wait: a cancel is never lost in it, as in wait_for
            woken = asyncio.ensure_future(wake.wait())
            try:
                await asyncio.wait({woken}, timeout=poll)
            finally:
                woken.cancel()
            return
        client = self._imap
        self.idling = True  # from here: a stop inside ``idle_start`` leaves an IDLE going
        idle = await client.idle_start(timeout=renew)
        pushed = asyncio.ensure_future(client.wait_server_push(timeout=renew + 5))
        woken = asyncio.ensure_future(wake.wait())
        try:
            await asyncio.wait({pushed, woken}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in (pushed, woken):
                waiting.cancel()
            await asyncio.gather(pushed, woken, return_exceptions=True)
            client.idle_done()
            self.idling = False
        await asyncio.wait_for(idle, self.timeout)

    def end_idle(self) -> None:
        """DONE for an IDLE a stop cut short before its own (inside ``idle_start``):
        aioimaplib queues every later command behind the IDLE, so a stop's marks and LOGOUT
        waited out their timeouts. Only then: a second DONE is a BAD command, which aioimaplib
        takes for a broken connection."""
        if self.idling and self.client is not None and self.client.has_pending_idle():
            self.client.idle_done()
        self.idling = False

    async def close(self) -> None:
        """LOGOUT (an IDLE cut short ended first), at most a few seconds."""
        if self.client is None:
            return
        transport = getattr(self.client.protocol, "transport", None)
        if transport is None or transport.is_closing():
            # a connection that is gone (a refused TLS handshake closes it): a LOGOUT on it
            # would only wait out its 5 s for an answer that cannot come
            self.client = None
            return
        with contextlib.suppress(TimeoutError, aioimaplib.AioImapException, OSError,
                                 AttributeError):  # no connection: no protocol either
            self.end_idle()
            await asyncio.wait_for(self.client.logout(), 5)
        self.client = None


def untrusted(server: str, host: str, exc: ssl.SSLCertVerificationError) -> str:
    """A certificate the client refused, in one sentence naming what to fix."""
    return (f"the {server} server's certificate for {host} is not trusted "
            f"({exc.verify_message or exc.reason}): check FRONTDESK_EMAIL_{server}_HOST (the "
            "name on the certificate) and that its issuer is in the system's trusted "
            "certificates (OpenSSL's store, or SSL_CERT_FILE)")


def describe(exc: BaseException) -> str:
    """An IMAP or network error in a few words (never the password: none is in them)."""
    if isinstance(exc, MailboxRefused):
        return str(exc)
    reason: Any = getattr(exc, "reason", None) or type(exc).__name__
    return str(reason)


def _said(lines: list[Any], pattern: re.Pattern[bytes]) -> str | None:
    """The first value a SELECT's response lines give for ``pattern`` (``[UIDNEXT 4]``)."""
    for line in lines:
        if isinstance(line, bytes | bytearray) and (found := pattern.search(line)):
            return found.group(1).decode()
    return None


def _uids(lines: list[Any]) -> set[int]:
    """The UIDs a UID SEARCH answered (its last line is the command's status)."""
    return {int(word) for line in lines[:-1] for word in bytes(line).split() if word.isdigit()}
