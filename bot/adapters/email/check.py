"""The doctor's look at the desk's mailbox: both logins, IMAP and SMTP, tried for real.

Each finding is ``(ok, what was found or what is wrong, the fix naming the variable)``; the
password is never in them (the servers' own words are left out of a refused login).
"""

from __future__ import annotations

import aiosmtplib

from bot.adapters.email.adapter import smtp_client, smtp_problem
from bot.adapters.email.mailbox import Mailbox, MailboxRefused
from bot.config.email_settings import EmailSettings

TIMEOUT_S = 10.0


def _split(problem: str) -> tuple[str, str]:
    parts = problem.partition(": check ")
    return parts[0], (f"check {parts[2]}" if parts[2] else "see docs/email.md")


async def logins(email: EmailSettings) -> list[tuple[bool, str, str]]:
    """The IMAP login (and the folder, and IDLE), then the SMTP login."""
    found: list[tuple[bool, str, str]] = []
    mailbox = Mailbox(email, timeout=TIMEOUT_S)
    try:
        await mailbox.open()
        how = "IDLE" if mailbox.idle else f"no IDLE: polled every {email.poll:g} s"
        found.append((True, f"IMAP {email.imap_host}: logged in as {email.username}, folder "
                            f"{email.folder} ({how})", ""))
    except MailboxRefused as refused:
        found.append((False, *_split(str(refused))))
    except (TimeoutError, OSError) as exc:
        found.append((False, f"IMAP {email.imap_host}:{email.imap_port} cannot be reached "
                             f"({type(exc).__name__})",
                      "check FRONTDESK_EMAIL_IMAP_HOST, FRONTDESK_EMAIL_IMAP_PORT and "
                      "FRONTDESK_EMAIL_SECURITY"))
    finally:
        await mailbox.close()
    try:
        async with smtp_client(email, TIMEOUT_S):
            pass  # connecting logs in (aiosmtplib does, given a user name and password)
        found.append((True, f"SMTP {email.smtp_host}: logged in as {email.username}", ""))
    except (TimeoutError, aiosmtplib.SMTPException, OSError) as exc:
        found.append((False, *_split(smtp_problem(email, exc))))
    return found
