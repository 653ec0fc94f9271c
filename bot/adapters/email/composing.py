"""One reply mail, built with the standard library's ``email`` package: headers that thread it
and keep other machines from answering it.

``compose_reply`` gives a ``text/plain; charset=utf-8`` mail, ``Subject: Re: …`` (one "Re:",
whatever prefixes the sender's client stacked: "RE:", "Re[2]:", "AW:", "SV:", "Fwd:" kept),
``In-Reply-To`` the original's Message-ID and ``References`` its references followed by it
(RFC 5322 3.6.4), From the desk. ``Auto-Submitted: auto-replied`` (RFC 3834) tells other
auto-responders not to answer us. Its ``Message-ID`` is derived from the outbox part's key and
the desk's domain, so a resend after a crash carries the same id and the receiving side can
tell the copy. Files are attached; a calendar file goes as ``text/calendar`` with its
``method`` (read from its METHOD line, REQUEST when it has none), which mail clients show as
an invitation.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from email.message import EmailMessage
from email.utils import formatdate, parseaddr

from bot.messages import OutgoingFile

# reply prefixes of the common clients, in their languages, with an optional count: "Re[2]:"
_REPLY_PREFIX = re.compile(
    r"^\s*(?:(?:re|aw|sv|vs|antw|antwort|r|rif|res|odp|ynt|atb)\s*(?:\[\d+\]|\(\d+\))?\s*:\s*)+",
    re.IGNORECASE)
_METHOD_LINE = re.compile(rb"^METHOD:([A-Za-z-]+)\s*$", re.MULTILINE)
MAX_SUBJECT_CHARS = 200
MAX_REFERENCES = 20  # ids of a thread's earlier mails kept in References


def reply_subject(subject: str) -> str:
    """``Re:`` once before the subject, whatever reply prefixes it already had."""
    bare = " ".join(subject.split())
    bare = _REPLY_PREFIX.sub("", bare).strip()
    return f"Re: {bare[:MAX_SUBJECT_CHARS]}" if bare else "Re: your message"


def message_id_for(part_key: str, desk_address: str) -> str:
    """The reply's Message-ID: the same for the same outbox part, at the desk's domain."""
    domain = parseaddr(desk_address)[1].rpartition("@")[2].strip() or "frontdesk.invalid"
    digest = hashlib.sha256(part_key.encode("utf-8")).hexdigest()[:32]
    return f"<frontdesk.{digest}@{domain}>"


def compose_reply(*, desk_address: str, to: str, subject: str, in_reply_to: str,
                  references: str, text: str, part_key: str,
                  files: Sequence[OutgoingFile]) -> EmailMessage:
    """The reply to one mail, ready for SMTP."""
    mail = EmailMessage()
    mail["From"] = _one_line(desk_address)
    mail["To"] = _one_line(to)  # from the mail's headers: no line break may inject one
    mail["Subject"] = reply_subject(subject)
    mail["Date"] = formatdate(localtime=False, usegmt=True)
    mail["Message-ID"] = message_id_for(part_key, desk_address)
    original = _one_line(in_reply_to)
    if original:
        mail["In-Reply-To"] = original
    # long threads' References are cut from the front (RFC 5322 allows dropping the middle)
    chain = " ".join([*references.split()[-MAX_REFERENCES:], *([original] if original else [])])
    if chain:
        mail["References"] = chain
    mail["Auto-Submitted"] = "auto-replied"
    mail.set_content(text, subtype="plain", charset="utf-8")
    for file in files:
        _attach(mail, file)
    return mail


def _one_line(value: str) -> str:
    return " ".join(value.split())


def _attach(mail: EmailMessage, file: OutgoingFile) -> None:
    maintype, subtype = (file.mime or "application/octet-stream").partition("/")[::2]
    if (maintype, subtype) == ("text", "calendar") or file.name.lower().endswith(".ics"):
        found = _METHOD_LINE.search(file.data)
        method = found.group(1).decode("ascii").upper() if found else "REQUEST"
        mail.add_attachment(file.data.decode("utf-8", "replace"), subtype="calendar",
                            charset="utf-8", filename=file.name,
                            params={"method": method})
        return
    if not subtype:
        maintype, subtype = "application", "octet-stream"
    mail.add_attachment(file.data, maintype=maintype, subtype=subtype, filename=file.name)
