"""Tell systemd how the service is doing: ``READY=1``, ``STOPPING=1``, ``STATUS=…``.

systemd's notification protocol is one datagram of ``KEY=value`` lines sent to the Unix socket
named by ``NOTIFY_SOCKET`` (a path, or ``@name`` for the abstract namespace). It is written
here in a few lines because no maintained library does it without a cost: ``systemd-python``
needs libsystemd's headers and a compiler to install, and ``sdnotify`` (last release 2017)
swallows every error with a bare ``except`` and ships no types. Without ``NOTIFY_SOCKET`` (not
started by systemd, or ``Type=simple``) every call does nothing.

Usage::

    notify("READY=1", "STATUS=Serving Telegram")   # the adapters serve
    notify("STOPPING=1")                           # SIGTERM: stopping
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Mapping

log = logging.getLogger(__name__)


def socket_address(name: str) -> str:
    """``NOTIFY_SOCKET`` as ``socket.sendto`` takes it: ``@`` is the abstract namespace's NUL."""
    return "\0" + name[1:] if name.startswith("@") else name


def notify(*lines: str, environ: Mapping[str, str] | None = None) -> bool:
    """Send one notification (``lines`` joined by newlines); True if systemd was told.

    Never raises: a service manager that cannot be told is logged once per call, and the bot
    runs on (systemd then reports the start as timed out, which names the problem).
    """
    name = (os.environ if environ is None else environ).get("NOTIFY_SOCKET", "")
    if not name:
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.sendto("\n".join(lines).encode(), socket_address(name))
    except OSError as error:
        log.warning("could not notify systemd at %s (%s)", name, error)
        return False
    return True
