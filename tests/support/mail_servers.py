"""Real mail servers on loopback for the email tests: Debian's Dovecot (IMAP) and aiosmtpd.

``Dovecot(folder)`` writes a throw-away config and password file under ``folder``, keeps its
mail there too (no root-only path), and runs ``dovecot -F`` on a free loopback port with
plaintext logins allowed (loopback only); given a test ``Certificate`` (``mail_tls``) it speaks
TLS, by STARTTLS on ``port`` and from the first byte on ``tls_port`` (its log's Login lines,
``logins``, say which sessions were TLS). Mail is delivered as a real server would have it
filed: by IMAP APPEND (``deliver``). ``Smtp()`` is aiosmtpd in a thread, keeping every mail it
accepted (``received``), and able to accept a mail and then stop answering (``hang_after``) so
a test can kill the bot between the server's accept and the bot's mark; given a certificate it
requires STARTTLS, or speaks TLS from the first byte (``implicit``).
"""

from __future__ import annotations

import imaplib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, Envelope, LoginPassword, Session

from tests.support.child_process import terminate
from tests.support.mail_tls import Certificate
from tests.support.polling import wait_until

DESK = "desk@frontdesk.test"
PASSWORD = "desk-secret-8"
DOVECOT = shutil.which("dovecot") or "/usr/sbin/dovecot"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def dovecot_missing() -> str | None:
    """Why the IMAP tests cannot run here, or None (``make test`` installs dovecot-imapd)."""
    if not os.path.exists(DOVECOT):
        return "Debian's dovecot-imapd is not installed (make test installs it with apt-get)"
    return None


CONFIG = """\
base_dir = {root}/run
state_dir = {root}/state
log_path = {root}/dovecot.log
protocols = imap
listen = 127.0.0.1
{ssl}
disable_plaintext_auth = no
auth_mechanisms = plain login
mail_location = maildir:{root}/mail/%u
first_valid_uid = 0
default_login_user = {login_user}
default_internal_user = {internal_user}
default_internal_group = {internal_group}
imap_idle_notify_interval = 1 secs
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {root}/passwd
}}
userdb {{
  driver = static
  args = uid={uid} gid={gid} home={root}/mail/%u
}}
service imap-login {{
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    address = 127.0.0.1
    port = {tls_port}
  }}
}}
service stats {{
  unix_listener stats-reader {{
    mode = 0666
  }}
  unix_listener stats-writer {{
    mode = 0666
  }}
}}
"""


class Dovecot:
    """A Dovecot IMAP server of its own: one mailbox, ``DESK`` with ``PASSWORD``."""

    def __init__(self, root: Path, *, idle: bool = True, tls: Certificate | None = None) -> None:
        self.idle = idle  # False: the server does not offer IDLE (the desk polls)
        self.tls = tls  # given: no login before TLS (STARTTLS on port, or on tls_port)
        # As root, dovecot's own users read the config and mail: a folder they can reach
        # (pytest's tmp folders are root's alone), removed again at exit.
        self.own_root = os.getuid() == 0
        self.root = Path(tempfile.mkdtemp(prefix="frontdesk-dovecot-")) if self.own_root \
            else root
        self.port = free_port()
        self.tls_port = free_port() if tls else 0  # 0: no imaps listener
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Dovecot:
        for sub in ("run", "state", "mail"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        (self.root / "passwd").write_text(f"{DESK}:{{PLAIN}}{PASSWORD}\n")
        uid, gid = os.getuid(), os.getgid()
        me = pwd.getpwuid(uid).pw_name
        if uid == 0:  # dovecot never keeps mail as root: as root, its own user keeps it
            owner = pwd.getpwnam("dovecot")
            uid, gid = owner.pw_uid, owner.pw_gid
            os.chown(self.root / "mail", uid, gid)
        # dovecot runs its login processes as an unprivileged user
        unprivileged = "dovenull" if os.getuid() == 0 else me
        internal = "dovecot" if os.getuid() == 0 else me
        group = "dovecot" if os.getuid() == 0 else me
        config = self.root / "dovecot.conf"
        # ssl = required: no login before TLS, except that Dovecot counts a loopback client as
        # secured and lets it in; its log's Login line then says "secured", and "TLS" only
        # for a TLS session (``logins``)
        ssl = f"ssl = required\nssl_cert = <{self.tls.cert}\nssl_key = <{self.tls.key}" \
            if self.tls else "ssl = no"
        config.write_text(CONFIG.format(root=self.root, port=self.port, uid=uid, gid=gid,
                                        login_user=unprivileged, internal_user=internal,
                                        internal_group=group, ssl=ssl, tls_port=self.tls_port)
                          + ("" if self.idle else "imap_capability = IMAP4rev1 LITERAL+\n"))
        if os.getuid() == 0:  # the login and auth processes read these as dovecot's own users
            os.chmod(self.root, 0o755)
            os.chmod(self.root / "passwd", 0o644)
        self.proc = subprocess.Popen([DOVECOT, "-F", "-c", str(config)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        def listening() -> bool:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return True
            except OSError:
                if self.proc is None or self.proc.poll() is not None:
                    raise RuntimeError(f"dovecot did not start: {self.log()}") from None
                return False

        try:
            wait_until(listening, 15, interval=0.05)
        except TimeoutError:
            raise RuntimeError(f"dovecot did not start: {self.log()}") from None
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            terminate(self.proc)
        if self.own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def log(self) -> str:
        path = self.root / "dovecot.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def logins(self) -> list[str]:
        """The log's Login lines, each ending in how the session was secured."""
        path = self.root / "dovecot.log"
        lines = path.read_text(errors="replace").splitlines() if path.exists() else []
        return [line for line in lines if "imap-login: Info: Login:" in line]

    def imap(self) -> imaplib.IMAP4:
        """A client logged in as the desk (``with``: logged out at the end)."""
        client = imaplib.IMAP4_SSL("127.0.0.1", self.tls_port,
                                   ssl_context=self.tls.client_context()) \
            if self.tls else imaplib.IMAP4("127.0.0.1", self.port)
        client.login(DESK, PASSWORD)
        return client

    def deliver(self, mail: EmailMessage | bytes, folder: str = "INBOX", *, flags: str = "",
                days_ago: float = 0.0) -> None:
        """File a mail in ``folder`` as the server's delivery would (IMAP APPEND): arrived
        ``days_ago`` (its INTERNALDATE), with ``flags`` such as ``(\\Seen)``."""
        raw = mail if isinstance(mail, bytes) else mail.as_bytes(policy=policy.SMTP)
        arrived = imaplib.Time2Internaldate(time.time() - days_ago * 86_400)
        with self.imap() as client:
            client.append(folder, flags, arrived, raw)

    def flags(self, folder: str = "INBOX") -> dict[str, str]:
        """Each mail's Message-ID with its flags."""
        with self.imap() as client:
            _, count = client.select(folder, readonly=True)
            if count[0] in (None, b"0"):
                return {}
            found: dict[str, str] = {}
            _, data = client.fetch("1:*", "(FLAGS BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)])")
            for item in data:
                if isinstance(item, tuple):
                    header = message_from_bytes(item[1], policy=policy.default)
                    found[str(header.get("Message-ID", ""))] = item[0].decode()
            return found

    def reset_folder(self, folder: str) -> None:
        """Delete and create ``folder`` again: a new UIDVALIDITY, every UID starting over."""
        with self.imap() as client:
            client.delete(folder)
            client.create(folder)

    def create(self, folder: str) -> None:
        with self.imap() as client:
            client.create(folder)


class _Keeper:
    """aiosmtpd's handler: keeps each accepted mail; ``hang`` holds the answer after DATA."""

    def __init__(self) -> None:
        self.received: list[EmailMessage] = []
        self.over_tls: list[bool] = []  # each kept mail: did it come over TLS
        self.arrived = threading.Condition()
        self.hang = threading.Event()  # set: a mail is kept, then its "250 OK" never comes
        self.hang_before = threading.Event()  # set: a mail is neither kept nor answered
        self.reached = threading.Event()  # a mail came while one of them was set
        self.answer_after = 0.0  # seconds a kept mail's "250 OK" takes (a slow server)

    async def handle_DATA(self, server: Any, session: Session, envelope: Envelope) -> str:
        import asyncio

        if self.hang_before.is_set():
            self.reached.set()
            await asyncio.Event().wait()  # the bot is killed while it waits
        content = envelope.original_content or b""
        mail = message_from_bytes(content, policy=policy.default)
        assert isinstance(mail, EmailMessage)
        with self.arrived:  # STARTTLS or implicit: the transport is then an SSL one
            self.over_tls.append(server.transport.get_extra_info("ssl_object") is not None)
            self.received.append(mail)
            self.arrived.notify_all()
        if self.hang.is_set():
            self.reached.set()
            await asyncio.Event().wait()  # the bot is killed while it waits for the answer
        if self.answer_after:  # a busy server: the mail is taken, its answer comes late
            await asyncio.sleep(self.answer_after)
        return "250 OK"


def _authenticate(server: Any, session: Session, envelope: Envelope, mechanism: str,
                  data: Any) -> AuthResult:
    """The desk's login, else ``535 5.7.8`` as a real server answers (``handled=False``:
    aiosmtpd's default, ``handled=True``, would leave the client waiting for an answer)."""
    good = isinstance(data, LoginPassword) and data.login.decode() == DESK \
        and data.password.decode() == PASSWORD
    return AuthResult(success=good, handled=False)


class Smtp:
    """aiosmtpd on a free loopback port, in a thread; what it accepted is in ``received``."""

    def __init__(self, tls: Certificate | None = None, *, implicit: bool = False) -> None:
        self.port = free_port()
        self.keeper = _Keeper()
        # a certificate: STARTTLS before anything else (require_starttls), or implicit TLS
        # (ssl_context); auth_require_tls stays off as aiosmtpd cannot tell implicit TLS
        secured: dict[str, Any] = {} if tls is None else \
            {"ssl_context": tls.server_context()} if implicit else \
            {"tls_context": tls.server_context(), "require_starttls": True}
        self.controller = Controller(self.keeper, hostname="127.0.0.1", port=self.port,
                                     authenticator=_authenticate, auth_require_tls=False,
                                     auth_exclude_mechanism=["LOGIN"], **secured)

    def __enter__(self) -> Smtp:
        self.controller.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.controller.stop()

    @property
    def received(self) -> list[EmailMessage]:
        return list(self.keeper.received)

    @property
    def over_tls(self) -> list[bool]:
        return list(self.keeper.over_tls)

    def wait_for(self, count: int, timeout: float = 20.0) -> list[EmailMessage]:
        """The mails received, once there are at least ``count`` (AssertionError at the
        deadline)."""
        with self.keeper.arrived:
            if not self.keeper.arrived.wait_for(lambda: len(self.keeper.received) >= count,
                                                timeout):
                raise AssertionError(f"{len(self.keeper.received)} mails arrived, not {count}")
            return list(self.keeper.received)

    def to(self, address: str) -> list[EmailMessage]:
        return [mail for mail in self.received if address in str(mail.get("To", ""))]


def mail(sender: str, subject: str, text: str, *, message_id: str,
         **headers: str) -> EmailMessage:
    """A plain mail to the desk; ``headers`` as keyword arguments (underscores for dashes)."""
    message = EmailMessage()
    message["From"] = sender
    message["To"] = DESK
    message["Subject"] = subject
    message["Message-ID"] = message_id
    message["Date"] = "Mon, 06 Jan 2025 10:00:00 +0000"
    for name, value in headers.items():
        message[name.replace("_", "-")] = value
    message.set_content(text)
    return message


def email_env(dovecot: Dovecot, smtp: Smtp, **extra: str) -> dict[str, str]:
    """The FRONTDESK_EMAIL_* settings pointing at these two servers."""
    env = {"FRONTDESK_EMAIL_ADDRESS": DESK, "FRONTDESK_EMAIL_IMAP_HOST": "127.0.0.1",
           "FRONTDESK_EMAIL_IMAP_PORT": str(dovecot.port),
           "FRONTDESK_EMAIL_SMTP_HOST": "127.0.0.1", "FRONTDESK_EMAIL_SMTP_PORT": str(smtp.port),
           "FRONTDESK_EMAIL_SECURITY": "none", "FRONTDESK_EMAIL_PASSWORD": PASSWORD}
    env.update(extra)
    return env
