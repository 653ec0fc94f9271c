"""A reply mail.

STAND-IN by the email branch so the transport runs; the mailparts branch owns this module
and its version replaces this one at the merge.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from email.message import EmailMessage

from bot.messages import OutgoingFile


def compose_reply(*, desk_address: str, to: str, subject: str, in_reply_to: str,
                  references: str, text: str, part_key: str,
                  files: Sequence[OutgoingFile]) -> EmailMessage:
    """The reply to one mail; its Message-ID derived from ``part_key``."""
    reply = EmailMessage()
    reply["From"] = desk_address
    reply["To"] = to
    reply["Subject"] = subject if subject.lower().startswith("re:") else f"Re: {subject}"
    digest = hashlib.sha256(f"{desk_address}|{part_key}".encode()).hexdigest()[:32]
    reply["Message-ID"] = f"<{digest}@{desk_address.rpartition('@')[2]}>"
    if in_reply_to:
        reply["In-Reply-To"] = in_reply_to
        reply["References"] = f"{references} {in_reply_to}".strip()
    reply.set_content(text, charset="utf-8")
    for file in files:
        maintype, subtype = (file.mime.partition("/")[0], file.mime.partition("/")[2])
        reply.add_attachment(file.data, maintype=maintype, subtype=subtype or "octet-stream",
                             filename=file.name)
    return reply
