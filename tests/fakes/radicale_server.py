"""A real CalDAV server for the tests: Radicale, served in a thread on loopback.

Radicale is the application itself (not a fake): its WSGI app runs under the standard
library's threading WSGI server, with a temporary storage folder and htpasswd (plain) users, so
the tests drive the real ``caldav`` client against a real server. Two knobs a test may turn:
``delay_s`` (every request waits that long first: a slow server) and ``stop()``/``start()``
(the port closes and reopens, the storage stays: a server that is down, then back).

Usage::

    from tests.fakes.radicale_server import RadicaleServer

    with RadicaleServer(tmp_path) as server:        # or the `radicale` fixture
        url = server.calendar_url("work")            # made on first use, empty
        server.put_event("work", ics_bytes)          # seed it (as the owner's own client would)
        # FRONTDESK_CALDAV_URL=url, USERNAME=server.username, PASSWORD=server.password
"""

from __future__ import annotations

import logging
import socketserver
import sys
import threading
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import httpx

USERNAME = "owner"
PASSWORD = "s3cret-radicale-pw"  # distinctive, so a test can look for it in logs and errors


class _ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """No access log on stderr."""


class RadicaleServer:
    """Radicale on 127.0.0.1; ``url`` is its root, ``calendar_url(name)`` a calendar."""

    def __init__(self, root: Path, *, username: str = USERNAME, password: str = PASSWORD,
                 port: int = 0) -> None:
        import radicale
        from radicale import config

        self.root, self.username, self.password = root, username, password
        self.port = port
        self.delay_s = 0.0
        self.requests = 0  # how many requests reached it (a test can see the copy is local)
        (root / "collections" / "collection-root").mkdir(parents=True, exist_ok=True)
        users = root / "users"
        users.write_text(f"{username}:{password}\n", encoding="utf-8")
        configuration = config.load()
        configuration.update({
            "auth": {"type": "htpasswd", "htpasswd_filename": str(users),
                     "htpasswd_encryption": "plain", "delay": "0"},
            "storage": {"filesystem_folder": str(root / "collections"),
                        "_filesystem_fsync": "False"},  # a test folder: speed over safety
            "rights": {"type": "owner_only"},
            "logging": {"level": "warning"},
        }, "tests", privileged=True)
        logging.getLogger("radicale").setLevel(logging.WARNING)
        self._app = radicale.Application(configuration)
        self._server: _ThreadingWSGIServer | None = None
        self._thread: threading.Thread | None = None

    # -- serving -------------------------------------------------------------------------

    def _wsgi(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        self.requests += 1
        if self.delay_s:
            time.sleep(self.delay_s)  # the slow server of the bench, in this request's thread
        result: Iterable[bytes] = self._app(environ, start_response)
        return result

    def start(self) -> RadicaleServer:
        """Listen (on the same port as before after a ``stop``)."""
        server = make_server("127.0.0.1", self.port, self._wsgi,
                             server_class=_ThreadingWSGIServer, handler_class=_QuietHandler)
        assert isinstance(server, _ThreadingWSGIServer)
        self._server = server
        self.port = server.server_address[1]
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="radicale", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Close the port: connections are refused until ``start``."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None

    def __enter__(self) -> RadicaleServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()

    # -- the calendars -------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The server's root (what a user gives when they name the calendar separately)."""
        return f"http://127.0.0.1:{self.port}/"

    def calendar_url(self, name: str, display_name: str | None = None) -> str:
        """The collection URL of calendar ``name`` of the user, made (empty) if missing."""
        url = f"{self.url}{self.username}/{name}/"
        with self._client() as client:
            if client.request("PROPFIND", url, headers={"Depth": "0"}).status_code == 404:
                shown = display_name or name
                body = ('<?xml version="1.0"?><C:mkcalendar xmlns:D="DAV:" '
                        'xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop>'
                        f"<D:displayname>{shown}</D:displayname></D:prop></D:set>"
                        "</C:mkcalendar>")
                made = client.request("MKCALENDAR", url, content=body.encode())
                assert made.status_code == 201, made.text
        return url

    def new_calendar(self, display_name: str | None = None) -> str:
        """A fresh, empty calendar with a unique name: one per test on a shared server."""
        return self.calendar_url(f"cal-{uuid.uuid4().hex[:12]}", display_name)

    def put_event(self, calendar_url: str, ics: bytes, name: str | None = None) -> str:
        """Store one calendar object (as the owner's own calendar app would); its URL."""
        url = f"{calendar_url}{name or uuid.uuid4().hex}.ics"
        with self._client() as client:
            stored = client.put(url, content=ics,
                                headers={"Content-Type": "text/calendar; charset=utf-8"})
            assert stored.status_code in (201, 204), stored.text
        return url

    def seed(self, calendar_url: str, ics: bytes) -> None:
        """Replace the calendar with a whole .ics (a real-world export) in one request:
        Radicale stores it as one object per UID (a series with its exceptions), each with
        the file's time zones, as a CalDAV client adding the events one by one would."""
        with self._client() as client:
            stored = client.put(calendar_url, content=ics,
                                headers={"Content-Type": "text/calendar; charset=utf-8"})
            assert stored.status_code in (201, 204), stored.text

    def delete(self, url: str) -> None:
        """Remove one object (the owner deleted an event elsewhere)."""
        with self._client() as client:
            client.delete(url).raise_for_status()

    def objects(self, calendar_url: str) -> list[bytes]:
        """The stored objects' bytes, straight from the storage folder (not over CalDAV)."""
        folder = self.root / "collections" / "collection-root" / calendar_url.removeprefix(
            self.url).strip("/")
        return [path.read_bytes() for path in sorted(folder.glob("*.ics"))]

    def _client(self) -> httpx.Client:
        return httpx.Client(auth=(self.username, self.password), timeout=10.0)



def serve_in_process(argv: list[str]) -> None:
    """``python -m tests.fakes.radicale_server ROOT PORT DELAY``: serve until stdin closes
    (a bench's server in a process of its own, so it takes no time from the measured one)."""
    root, port, delay = Path(argv[0]), int(argv[1]), float(argv[2])
    server = RadicaleServer(root, port=port)
    server.delay_s = delay
    with server:
        print(server.url, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    serve_in_process(sys.argv[1:])
