"""The email adapter's outbound side: a reply part becomes one mail, sent by SMTP.

``EmailAdapter.send(address, text, key=…)`` answers the correspondent's oldest open mail
(``bot.adapters.email.threads``): ``Re:`` its subject, ``In-Reply-To``/``References`` set, To
the sender, From the desk, its Message-ID derived from the outbox part's key, so a part sent
again after a crash carries the same id (``composing.compose_reply``). It refuses for good
(``Undeliverable``: the outbox marks the part failed, nothing is sent) a mail that must never
be answered (``rules.never_answer``) and a correspondent past their replies of the day. A
reply's buttons (a meeting's times) become a numbered list in the same mail (``with_choices``). Sent
with ``aiosmtplib`` (asyncio; implicit TLS, STARTTLS, or plain on loopback). Email has no owner
chat: the owner is reached on a chat platform.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Sequence

import aiosmtplib

from bot.adapters.email.composing import compose_reply
from bot.adapters.email.files import MailFiles
from bot.adapters.email.mailbox import untrusted
from bot.adapters.email.threads import Thread, Threads
from bot.config.email_settings import EmailSettings
from bot.messages import Attachment, Button, OutgoingFile, Undeliverable, numbered_choices

log = logging.getLogger(__name__)
PLATFORM = "email"
COMMAND_TIMEOUT_S = 30.0  # connecting, logging in, each command but the mail's last one
# The server's answer to the mail's end ("250 OK" after DATA): RFC 5321 4.5.3.2.6 has a
# client wait 10 minutes for it. Giving up sooner leaves a mail the server may have taken
# unmarked in the outbox, which the next flush then sends again under the same Message-ID.
DATA_REPLY_TIMEOUT_S = 600.0


class SmtpRefused(Exception):
    """The SMTP server refused the login or could not be reached: names what to fix."""


def smtp_client(settings: EmailSettings,
                timeout: float = COMMAND_TIMEOUT_S) -> aiosmtplib.SMTP:
    """A client for the desk's SMTP server, as FRONTDESK_EMAIL_SECURITY says."""
    return aiosmtplib.SMTP(hostname=settings.smtp_host, port=settings.smtp_port,
                           username=settings.username, password=settings.password,
                           use_tls=settings.security == "tls",
                           start_tls=settings.security == "starttls",
                           tls_context=ssl.create_default_context()
                           if settings.security != "none" else None,
                           timeout=timeout)


def smtp_problem(settings: EmailSettings, exc: BaseException) -> str:
    """One sentence naming the variable to fix (never the password)."""
    # refused by STARTTLS: the ssl error itself; by implicit TLS: an SMTPConnectError from it
    for cause in (exc, exc.__cause__):
        if isinstance(cause, ssl.SSLCertVerificationError):
            return untrusted("SMTP", settings.smtp_host, cause)
    if isinstance(exc, aiosmtplib.SMTPAuthenticationError):
        return (f"the SMTP server refused the login of {settings.username}: check "
                "FRONTDESK_EMAIL_PASSWORD (and FRONTDESK_EMAIL_USERNAME)")
    return (f"the SMTP server {settings.smtp_host}:{settings.smtp_port} cannot be used "
            f"({type(exc).__name__}): check FRONTDESK_EMAIL_SMTP_HOST, "
            "FRONTDESK_EMAIL_SMTP_PORT and FRONTDESK_EMAIL_SECURITY")


def with_choices(text: str, buttons: list[Button] | None) -> str:
    """A mail has no buttons: they become a numbered list in the same mail, answered by
    writing "2" or the choice's words (the chat's typed picks take either)."""
    return numbered_choices(text, [button.label for button in buttons or []])


class EmailAdapter:
    """Replies by mail; what ``bot.delivery.outbox`` sends through for the ``email`` chats."""

    platform = PLATFORM
    caption_limit = 100_000  # a file rides in the same mail as the text

    def __init__(self, settings: EmailSettings, threads: Threads,
                 files: MailFiles | None = None, *, timeout: float = COMMAND_TIMEOUT_S,
                 data_timeout: float = DATA_REPLY_TIMEOUT_S) -> None:
        self.settings = settings
        self.threads = threads
        self.files = files or MailFiles(settings, 20_000_000)
        self.timeout = timeout  # connect, login
        self.data_timeout = data_timeout  # the mail's commands, its end's "250" above all

    def split(self, text: str) -> list[str]:
        """A mail has room for the whole answer: one part, one mail."""
        return [text]

    async def send(self, chat_id: str, text: str, buttons: list[Button] | None = None, *,
                   key: str | None = None) -> str:
        return await self._mail(chat_id, with_choices(text, buttons), (), key)

    async def send_file(self, chat_id: str, file: OutgoingFile, caption: str = "",
                        buttons: list[Button] | None = None, *, key: str | None = None) -> str:
        return await self._mail(chat_id, with_choices(caption, buttons), (file,), key)

    async def fetch_attachment(self, attachment: Attachment, max_bytes: int) -> bytes:
        """A mail's file, for the media pipeline (``bot.adapters.email.files``)."""
        return await self.files.fetch(attachment, max_bytes)

    async def owner_chat(self) -> str | None:
        return None  # email never reaches (or makes) the owner

    async def _mail(self, address: str, text: str, files: Sequence[OutgoingFile],
                    key: str | None) -> str:
        thread = (self.threads.answering(address) or self.threads.replying_to(address)
                  or Thread(message_id="", address=address))
        if thread.never:
            raise Undeliverable(f"never answered: {thread.never}")
        return await self.reply(thread, text, files, key or f"{address}|{thread.message_id}")

    async def reply(self, thread: Thread, text: str, files: Sequence[OutgoingFile],
                    key: str) -> str:
        """Send one reply to ``thread``'s sender, within the day's share; its Message-ID."""
        if self.threads.sent_today(thread.address) >= self.settings.replies_per_day:
            raise Undeliverable(f"{self.settings.replies_per_day} replies to "
                                f"{thread.address} today already")
        mail = compose_reply(desk_address=self.settings.address, to=thread.address,
                             subject=thread.subject or "your mail",
                             in_reply_to=thread.message_id, references=thread.references,
                             text=text, part_key=key, files=files)
        try:
            async with smtp_client(self.settings, self.timeout) as smtp:
                refused, _ = await smtp.send_message(mail, timeout=self.data_timeout)
        except aiosmtplib.SMTPRecipientsRefused as exc:
            raise Undeliverable(f"the server refused {thread.address}") from exc
        except (aiosmtplib.SMTPAuthenticationError, aiosmtplib.SMTPConnectError,
                ssl.SSLCertVerificationError) as exc:  # each names what to fix in the log
            log.warning("email: %s", smtp_problem(self.settings, exc))
            raise
        if refused:
            raise Undeliverable(f"the server refused {', '.join(refused)}")
        self.threads.count_sent(thread.address)
        return str(mail["Message-ID"])
