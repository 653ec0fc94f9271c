"""Who may reach the dashboard: its token always (made at first start unless set), loopback
unless a token is set explicitly, and the CLI and `frontdesk run` refusing an unsafe address."""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from bot.dashboard.server import (
    TOKEN_ENV,
    TOKEN_FILE,
    DashboardData,
    DashboardRefused,
    DashboardServer,
    check_bind,
    serve_dashboard,
    start_dashboard,
)
from graphs.runs.reading import RunReading
from tests.dashboard.conftest import Desk, Site
from tests.support.child_process import clean_env

TOKEN = "s3cret-token-for-tests-only"
VENV_BIN = Path(sys.executable).parent


@pytest.fixture
async def guarded(desk: Desk) -> AsyncIterator[DashboardServer]:
    """A dashboard that requires ``TOKEN``."""
    reader = RunReading(desk.services.db.reader)
    server = await start_dashboard(DashboardData(reader, desk.services.flows.runs.registry), port=0,
                                   token=TOKEN)
    yield server
    await server.close()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "127.0.0.2", "[::1]"])
def test_loopback_needs_no_token(host: str) -> None:
    check_bind(host, None)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "frontdesk.example"])
def test_other_addresses_need_a_token(host: str) -> None:
    with pytest.raises(DashboardRefused, match=TOKEN_ENV):
        check_bind(host, None)
    check_bind(host, TOKEN)


async def test_it_refuses_before_listening(desk: Desk) -> None:
    reader = RunReading(desk.services.db.reader)
    with pytest.raises(DashboardRefused, match=r"127\.0\.0\.1"):
        await start_dashboard(DashboardData(reader, {}), host="0.0.0.0", port=0)


async def test_with_a_token_every_request_must_carry_it(guarded: DashboardServer) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.get(guarded.url + "api/runs") as bare:
            assert bare.status == 401
            assert TOKEN not in await bare.text()
        wrong = {"Authorization": "Bearer not-the-token"}
        async with http.get(guarded.url + "api/runs", headers=wrong) as refused:
            assert refused.status == 401
        right = {"Authorization": f"Bearer {TOKEN}"}
        async with http.get(guarded.url + "api/runs", headers=right) as allowed:
            assert allowed.status == 200 and (await allowed.json())["runs"] == []
        async with http.get(guarded.url + "static/run.js") as asset:
            assert asset.status == 401


async def test_a_token_link_becomes_a_cookie_and_leaves_the_address(
        guarded: DashboardServer) -> None:
    # unsafe=True: by default the client's jar keeps no cookies from an IP address
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        async with http.get(guarded.url + f"?status=waiting&token={TOKEN}",
                            allow_redirects=False) as link:
            assert link.status == 302
            assert link.headers["Location"] == "/?status=waiting"
            cookie = link.headers["Set-Cookie"]
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        async with http.get(guarded.url + "api/runs") as with_cookie:  # the jar sends it
            assert with_cookie.status == 200
        async with http.get(guarded.url + f"/evil.example/?token={TOKEN}",
                            allow_redirects=False) as sneaky:
            assert sneaky.headers["Location"] == "/evil.example/"  # stays on this site


async def test_without_a_token_only_loopback_host_names_are_served(open_site: Site) -> None:
    site = open_site
    port = site.url.rsplit(":", 1)[1].strip("/")
    for host, status in ((f"localhost:{port}", 200), (f"127.0.0.1:{port}", 200),
                         ("attacker.example", 403)):
        async with site.http.get(site.url + "api/runs", headers={"Host": host}) as answer:
            assert answer.status == status, host


async def test_every_answer_carries_the_security_headers(site: Site) -> None:
    for path in ("", "runs/x", "api/runs", "static/dashboard.css", "api/runs/none"):
        async with site.http.get(site.url + path) as answer:
            assert answer.headers["X-Content-Type-Options"] == "nosniff", path
            assert "frame-ancestors 'none'" in answer.headers["Content-Security-Policy"], path


async def test_serve_dashboard_runs_until_cancelled(desk: Desk,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    await desk.social()
    urls: asyncio.Queue[str] = asyncio.Queue()
    task = asyncio.create_task(serve_dashboard(desk.services.flows.runs.registry,
                                               desk.services.settings, desk.services.db, port=0,
                                               on_ready=urls.put_nowait))
    link = await asyncio.wait_for(urls.get(), 10)
    # No token set: one was made in the home, readable by the owner only, and the link
    # carries it.
    kept = desk.services.settings.home / TOKEN_FILE
    token = kept.read_text().strip()
    assert kept.stat().st_mode & 0o777 == 0o600 and len(token) >= 32
    url, _, query = link.partition("?")
    assert query == f"token={token}"
    async with aiohttp.ClientSession() as http:
        async with http.get(url + "api/runs") as bare:  # nothing without the token
            assert bare.status == 401
            assert "csrf" not in await bare.text() and "triage" not in await bare.text()
        bearer = {"Authorization": f"Bearer {token}"}
        async with http.get(url + "api/runs", headers=bearer) as answer:
            assert [r["workflow"] for r in (await answer.json())["runs"]] == ["triage"]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    async with aiohttp.ClientSession() as http:
        with pytest.raises(aiohttp.ClientConnectionError):
            await http.get(url + "api/runs")


async def test_frontdesk_run_refuses_a_public_host_without_a_token(
        desk: Desk, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FRONTDESK_DASHBOARD_HOST", "0.0.0.0")
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    with pytest.raises(DashboardRefused, match=TOKEN_ENV):
        await serve_dashboard(desk.services.flows.runs.registry, desk.services.settings,
                              desk.services.db, port=0)


async def start_cli_dashboard(home: Path) -> tuple[asyncio.subprocess.Process, str]:
    """`frontdesk dashboard --port 0` on ``home``, and the first line it prints (its link)."""
    process = await asyncio.create_subprocess_exec(
        VENV_BIN / "frontdesk", "dashboard", "--port", "0", env=cli_env(home), cwd=home,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert process.stdout is not None
    line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
    return process, line


def cli_env(home: Path) -> dict[str, str]:
    return clean_env(FRONTDESK_HOME=str(home), FRONTDESK_MODEL_PROVIDER="offline")


async def test_the_cli_refuses_a_public_host_without_a_token(tmp_path: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        VENV_BIN / "frontdesk", "dashboard", "--host", "0.0.0.0", "--port", "0",
        env=cli_env(tmp_path), cwd=tmp_path, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    _, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 2
    assert TOKEN_ENV in err.decode() and "Traceback" not in err.decode()


async def test_the_cli_serves_the_runs_of_its_home(desk: Desk) -> None:
    await desk.social()
    home = desk.services.settings.home
    process, line = await start_cli_dashboard(home)
    try:
        assert "http://127.0.0.1:" in line, line
        link = line.split()[2]
        token = (home / TOKEN_FILE).read_text().strip()
        assert link.endswith(f"/?token={token}")
        jar = aiohttp.CookieJar(unsafe=True)  # the first visit by the link leaves a cookie
        async with aiohttp.ClientSession(cookie_jar=jar) as http:
            async with http.get(link) as page:
                assert page.status == 200
            async with http.get(link.partition("?")[0] + "api/runs") as answer:
                runs = (await answer.json())["runs"]
        assert [(r["workflow"], r["route"]) for r in runs] == [("triage", "quick_reply")]
        process.send_signal(signal.SIGINT)
        assert await asyncio.wait_for(process.wait(), 30) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_the_token_set_in_the_environment_is_the_one_and_the_kept_one_stays(
        desk: Desk, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = desk.services.settings
    links: asyncio.Queue[str] = asyncio.Queue()
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    db = desk.services.db
    task = asyncio.create_task(serve_dashboard(desk.services.flows.runs.registry, settings, db,
                                               port=0, on_ready=links.put_nowait))
    assert (await asyncio.wait_for(links.get(), 10)).endswith(f"?token={TOKEN}")
    assert not (settings.home / TOKEN_FILE).exists()
    task.cancel()
    monkeypatch.delenv(TOKEN_ENV)
    made = []
    for _ in range(2):  # the token made at first start is kept for the next one
        task = asyncio.create_task(serve_dashboard(desk.services.flows.runs.registry, settings, db,
                                                   port=0, on_ready=links.put_nowait))
        made.append((await asyncio.wait_for(links.get(), 10)).partition("?token=")[2])
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert made[0] == made[1] != TOKEN


async def test_frontdesk_run_exits_2_naming_the_setting_before_the_banner(
        tmp_path: Path) -> None:
    env = {**cli_env(tmp_path), "FRONTDESK_DASHBOARD_PORT": "8765",
           "FRONTDESK_DASHBOARD_HOST": "0.0.0.0"}
    process = await asyncio.create_subprocess_exec(
        VENV_BIN / "frontdesk", "run", env=env, cwd=tmp_path, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 60)
    said = (out + err).decode()
    assert process.returncode == 2, said
    assert "FRONTDESK_DASHBOARD_HOST" in said and TOKEN_ENV in said
    assert "Traceback" not in said and "unexpected" not in said and "Frontdesk" not in said
    assert len(said.strip().splitlines()) == 1
