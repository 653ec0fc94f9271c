"""Start email: log in, send what is owed, answer what a crash left open, then read the folder.

``run_email(desk, cursors, settings)`` is what ``frontdesk run`` starts when
``FRONTDESK_EMAIL_ADDRESS`` is set. A login the server refuses stops email with one sentence
naming the variable to fix (the other platforms go on: ``frontdesk run`` stops on the first
adapter that ends, so the refusal is logged and email waits to try again instead). A dropped
connection is opened again with backoff; the mail recorded meanwhile is answered once.
"""

from __future__ import annotations

import asyncio
import logging

from bot.adapters.base import Adapter, AdapterCursors
from bot.adapters.email.adapter import PLATFORM, EmailAdapter
from bot.adapters.email.files import MailFiles
from bot.adapters.email.intake import EmailIntake
from bot.adapters.email.mailbox import Mailbox, MailboxRefused, describe
from bot.adapters.email.threads import Threads
from bot.config.banner import announce, arrived
from bot.config.email_settings import EmailSettings
from bot.config.settings import Settings
from bot.messages import Inbound

log = logging.getLogger(__name__)
MAX_BACKOFF_S = 300.0


def email_line(email: EmailSettings, idle: bool) -> str:
    """``Email: <address> (IMAP <host>, IDLE|polling)``."""
    how = "IDLE" if idle else f"polling every {email.poll:g} s"
    return f"  {'Email:':<11} {email.address} (IMAP {email.imap_host}, {how})"


async def run_email(desk: Inbound[Adapter], cursors: AdapterCursors, settings: Settings,
                    *, retry_base: float = 1.0) -> None:
    """Serve the desk's mailbox until cancelled."""
    email = settings.email
    assert email is not None, "run_email needs FRONTDESK_EMAIL_ADDRESS"
    threads = Threads(cursors)
    max_bytes = int(settings.max_file_mb * 1_000_000)
    adapter = EmailAdapter(email, threads, MailFiles(email, max_bytes))
    delay = retry_base
    attached = False
    while True:
        mailbox = Mailbox(email)
        intake = EmailIntake(mailbox, desk, adapter, threads, email, max_bytes)
        try:
            await mailbox.open()
            if not attached:
                announce(email_line(email, mailbox.idle))
                arrived("Email")
                await desk.attach(adapter)  # owed parts sent, open mail answered
                attached = True
            intake.after_recovery()
            delay = retry_base
            await intake.serve()
        except asyncio.CancelledError:
            await intake.drain()
            raise
        except MailboxRefused as refused:
            log.error("email: %s", refused)
            if not attached:
                announce(f"  {'Email:':<11} {email.address}: {refused}")
                arrived("Email")
        except Exception as exc:
            log.warning("email: the IMAP connection failed (%s); opening it again in %.0f s",
                        describe(exc), delay)
        finally:
            await mailbox.close()
        await asyncio.sleep(delay)
        delay = min(delay * 2, MAX_BACKOFF_S)


__all__ = ["PLATFORM", "run_email"]
