"""Which mail must never be answered, and which comes from a stranger.

STAND-IN by the email branch so the transport runs; the mailparts branch owns this module
and its version replaces this one at the merge.
"""

from __future__ import annotations

from email.message import EmailMessage
from email.utils import parseaddr

_NO_REPLY = ("mailer-daemon", "postmaster", "no-reply", "noreply", "donotreply", "do-not-reply")


def never_answer(message: EmailMessage, desk_address: str) -> str | None:
    """Why ``message`` must never get a reply, or None when it may."""
    auto = str(message.get("Auto-Submitted", "")).strip().lower()
    if auto and auto != "no":
        return "auto-submitted"
    if str(message.get("Precedence", "")).strip().lower() in {"bulk", "list", "junk"}:
        return "bulk or list mail"
    if message.get("List-Id") is not None or message.get("List-Unsubscribe") is not None:
        return "list mail"
    if "Return-Path" in message and str(message["Return-Path"]).strip() in {"", "<>"}:
        return "a bounce"
    sender = parseaddr(str(message.get("From", "")))[1].lower()
    if any(word in sender.partition("@")[0] for word in _NO_REPLY):
        return "a no-reply sender"
    if message.get("X-Autoreply") is not None or message.get("X-Autorespond") is not None:
        return "an automatic reply"
    if sender == desk_address.lower():
        return "the desk's own address"
    return None


def from_stranger(message: EmailMessage) -> bool:
    """Whether the receiving server found the sender's domain forged (dmarc=fail)."""
    return any("dmarc=fail" in str(value).lower()
               for value in message.get_all("Authentication-Results", []))
