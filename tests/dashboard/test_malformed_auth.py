"""A malformed ``Authorization`` header, sent as raw bytes to the real `frontdesk dashboard`
on loopback: 401 every time, before any token check, and no traceback in frontdesk.log."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest

from bot.dashboard.server import TOKEN_FILE
from tests.dashboard.test_access import start_cli_dashboard


async def status_of(host: str, port: int, authorization: bytes, cookie: bytes = b"") -> int:
    """The status line's code for one GET of /api/runs with these header bytes as sent."""
    reader, writer = await asyncio.open_connection(host, port)
    request = (b"GET /api/runs HTTP/1.1\r\nHost: " + host.encode() + b"\r\n"
               b"Authorization: " + authorization + b"\r\n"
               + (b"Cookie: " + cookie + b"\r\n" if cookie else b"") +
               b"Connection: close\r\n\r\n")
    writer.write(request)
    await writer.drain()
    status_line = await asyncio.wait_for(reader.readline(), 30)
    writer.close()
    await writer.wait_closed()
    return int(status_line.split()[1])


@pytest.mark.timeout(120)
async def test_a_malformed_authorization_header_is_401_and_logs_no_traceback(
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    process, line = await start_cli_dashboard(home)
    try:
        address = line.split()[2].removeprefix("http://").partition("/")[0]
        host, _, port = address.rpartition(":")
        token = (home / TOKEN_FILE).read_text().strip().encode()

        for malformed in (b"Bearer \xe9\xff", b"Bearer caf\xc3\xa9", b"\xff\xfe",
                          b"Bearer " + token + b"\xe9", b"Basic dXNlcjpwYXNz", b"Bearer",
                          b"Bearer a b", token):
            assert await status_of(host, int(port), malformed) == 401, malformed
        # a malformed header is refused even beside a good cookie, and a cookie that is not
        # UTF-8 is only a wrong one
        cookie = b"frontdesk_dashboard=" + token
        assert await status_of(host, int(port), b"Bearer \xe9", cookie) == 401
        assert await status_of(host, int(port), b"Bearer " + token,
                               b"frontdesk_dashboard=\xe9\xff") == 200
        assert await status_of(host, int(port), b"Bearer " + token) == 200  # the check has teeth
        assert await status_of(host, int(port), b"bearer  " + token) == 200  # any case, spaces

        process.send_signal(signal.SIGINT)
        _, err = await asyncio.wait_for(process.communicate(), 30)
        assert process.returncode == 0, err
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    # `frontdesk dashboard` logs to its terminal, and the details to frontdesk.log if any
    log = home / "logs" / "frontdesk.log"
    said = err.decode(errors="replace") + (log.read_text(errors="replace") if log.exists()
                                           else "")
    assert "Traceback" not in said and "Error handling request" not in said, said
