"""The FRONTDESK_EMAIL_* settings: the desk's own mailbox, each variable checked once at start.

Email is on when ``FRONTDESK_EMAIL_ADDRESS`` is set; then the servers, the security, the login
and the rules are read here (``email_settings``) and a bad value raises a ValueError naming
the variable, like every setting (``bot.config.values``). The password is a secret: kept out
of ``repr``, never quoted in a message.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from bot.config import values

SECURITY_MODES = ("tls", "starttls", "none")
_ADDRESS = re.compile(r"[^@\s,<>]+@[^@\s,<>]+\.[^@\s,<>]+|[^@\s,<>]+@localhost")
_DOMAIN = re.compile(r"@[^@\s,<>]+")
_HOST = re.compile(r"[A-Za-z0-9.:\-\[\]]+")


@dataclass(frozen=True)
class EmailSettings:
    """Where the desk's mail is read and sent from, and whom it answers on its own."""

    address: str  # FRONTDESK_EMAIL_ADDRESS: the From of every reply (lower-cased)
    imap_host: str
    smtp_host: str
    imap_port: int = 993
    smtp_port: int = 465
    security: str = "tls"  # tls | starttls | none (loopback only)
    username: str = ""  # FRONTDESK_EMAIL_USERNAME: the address when unset
    password: str = field(default="", repr=False)
    folder: str = "INBOX"
    poll: float = 60.0  # seconds between looks when the server has no IDLE
    allowed: frozenset[str] = frozenset()  # addresses and @domains answered without a draft
    replies_per_day: int = 5  # replies to one correspondent a day

    def allows(self, address: str) -> bool:
        """Whether mail from ``address`` is answered without the owner's approval."""
        address = address.strip().lower()
        domain = "@" + address.rpartition("@")[2]
        return address in self.allowed or domain in self.allowed


def is_loopback(host: str) -> bool:
    """A host name that can only mean this machine."""
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _host(name: str, text: str | None) -> str:
    if not text:
        raise ValueError(f"{name} is not set: FRONTDESK_EMAIL_ADDRESS is, so the desk needs "
                         "its mail server's host name, e.g. imap.fastmail.com (docs/email.md)")
    if not _HOST.fullmatch(text):
        raise ValueError(f"{values.shown(name, text)} is not a host name, e.g. imap.fastmail.com")
    return text


def allowed_senders(name: str, raw: str | None) -> frozenset[str]:
    """Addresses and ``@domains``, separated by commas (blanks ignored), lower-cased."""
    parts = [part.strip().lower() for part in (raw or "").split(",") if part.strip()]
    for part in parts:
        if not (_ADDRESS.fullmatch(part) or _DOMAIN.fullmatch(part)):
            raise ValueError(f"{values.shown(name, raw or '')}: {part!r} is neither an address "
                             "nor an @domain; expected e.g. ana@example.com,@example.org")
    return frozenset(parts)


def email_settings(get: Callable[[str], str | None]) -> EmailSettings | None:
    """The email settings, or None when FRONTDESK_EMAIL_ADDRESS is not set."""
    address = get("FRONTDESK_EMAIL_ADDRESS")
    if address is None:
        named = [name for name in ("FRONTDESK_EMAIL_IMAP_HOST", "FRONTDESK_EMAIL_SMTP_HOST",
                                   "FRONTDESK_EMAIL_PASSWORD") if get(name)]
        if named:
            raise ValueError(f"{named[0]} is set but FRONTDESK_EMAIL_ADDRESS is not: set it to "
                             "the desk's own address, or unset the other")
        return None
    if not _ADDRESS.fullmatch(address):
        raise ValueError(f"{values.shown('FRONTDESK_EMAIL_ADDRESS', address)} is not an email "
                         "address, e.g. desk@example.com")
    imap_host = _host("FRONTDESK_EMAIL_IMAP_HOST", get("FRONTDESK_EMAIL_IMAP_HOST"))
    smtp_host = _host("FRONTDESK_EMAIL_SMTP_HOST", get("FRONTDESK_EMAIL_SMTP_HOST"))
    security = values.choice("FRONTDESK_EMAIL_SECURITY", get("FRONTDESK_EMAIL_SECURITY"),
                             SECURITY_MODES, "tls") or "tls"
    if security == "none" and not (is_loopback(imap_host) and is_loopback(smtp_host)):
        raise ValueError("FRONTDESK_EMAIL_SECURITY='none' sends the password in the clear: it "
                         "is allowed only when both mail servers are on this machine "
                         "(127.0.0.1, localhost); use tls or starttls")
    password = get("FRONTDESK_EMAIL_PASSWORD")
    if password is None:
        raise ValueError("FRONTDESK_EMAIL_PASSWORD is not set: the mailbox's password (an app "
                         "password for Gmail and Fastmail, docs/email.md)")
    return EmailSettings(
        address=address.lower(), imap_host=imap_host, smtp_host=smtp_host,
        imap_port=values.port("FRONTDESK_EMAIL_IMAP_PORT", get("FRONTDESK_EMAIL_IMAP_PORT"))
        or 993,
        smtp_port=values.port("FRONTDESK_EMAIL_SMTP_PORT", get("FRONTDESK_EMAIL_SMTP_PORT"))
        or 465,
        security=security,
        username=get("FRONTDESK_EMAIL_USERNAME") or address,
        password=password,
        folder=get("FRONTDESK_EMAIL_FOLDER") or "INBOX",
        poll=values.positive("FRONTDESK_EMAIL_POLL", get("FRONTDESK_EMAIL_POLL"), 60.0,
                             "seconds", "60"),
        allowed=allowed_senders("FRONTDESK_EMAIL_ALLOWED", get("FRONTDESK_EMAIL_ALLOWED")),
        replies_per_day=values.whole("FRONTDESK_EMAIL_REPLIES_PER_DAY",
                                     get("FRONTDESK_EMAIL_REPLIES_PER_DAY"), 5, low=0,
                                     high=10_000, example="5"),
    )
