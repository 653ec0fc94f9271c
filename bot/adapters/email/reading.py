"""A mail's text and files.

STAND-IN by the email branch so the transport runs; the mailparts branch owns this module
and its version replaces this one at the merge.
"""

from __future__ import annotations

from dataclasses import dataclass
from email.message import EmailMessage


@dataclass(frozen=True)
class MailFile:
    name: str
    mime: str
    data: bytes


@dataclass(frozen=True)
class MailText:
    text: str
    attachments: tuple[MailFile, ...] = ()


def read_mail(message: EmailMessage, max_bytes: int) -> MailText:
    """The plain text of ``message`` (its files left out in this stand-in)."""
    body = message.get_body(preferencelist=("plain", "html"))
    text = body.get_content() if body is not None else ""
    return MailText(text=str(text)[:max_bytes].strip())
