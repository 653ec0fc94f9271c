"""The dashboard's web server: two pages, their static files and two JSON endpoints (aiohttp).

Every request must carry the access token, as a notebook server's do: ``Authorization:
Bearer …`` (scripts), or the cookie (HttpOnly, SameSite=Strict) that the ``?token=`` link
printed at start sets on the first visit. The token is ``FRONTDESK_DASHBOARD_TOKEN`` when set,
else a random one made at first start and kept in ``FRONTDESK_HOME/dashboard-token`` (mode
0600). It listens on 127.0.0.1 unless told otherwise, and refuses any other address unless
``FRONTDESK_DASHBOARD_TOKEN`` is set explicitly. A server started without a token (only
``start_dashboard`` allows that) serves loopback ``Host`` headers only, so a web page
elsewhere cannot read it through DNS rebinding. Inside ``frontdesk run`` the owner
may answer a waiting approval (``POST /api/runs/{id}/answer``, ``bot.dashboard.actions``):
besides the access rule, that POST must carry the CSRF token that ``/api/runs`` hands out
(``X-CSRF-Token``; another site's page cannot read it) and, when the browser sends one, an
``Origin`` of this very host. The pages build their DOM from the JSON with ``textContent``;
a strict Content-Security-Policy forbids inline scripts besides.

Usage::

    server = await start_dashboard(DashboardData(store, registry), port=0, token=token)
    print(server.link)         # http://127.0.0.1:41234/?token=…
    await server.close()
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import logging
import os
import re
import secrets
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web
from aiohttp.typedefs import Middleware

from bot.dashboard.data import STATUSES, list_runs, run_detail
from graphs.runs import Registry
from graphs.runs.reading import RunReading

if TYPE_CHECKING:
    from bot.config.settings import Settings
from sqlitedb.database import Database

STATIC = Path(__file__).resolve().parent / "static"
DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8765
TOKEN_ENV, HOST_ENV = "FRONTDESK_DASHBOARD_TOKEN", "FRONTDESK_DASHBOARD_HOST"
COOKIE = "frontdesk_dashboard"
TOKEN_FILE = "dashboard-token"  # in FRONTDESK_HOME: the token made at first start
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}
# ``Authorization: Bearer <token>`` (RFC 6750: the scheme in any case), the token visible
# ASCII; any other header is malformed
_BEARER = re.compile(r"(?i:bearer) +([!-~]+)")
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
                               "img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
                               "form-action 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
log = logging.getLogger(__name__)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class DashboardRefused(ValueError):
    """The dashboard will not listen where it was asked to (says why and what to do)."""


Answer = Callable[[str, str], Awaitable[tuple[bool, str]]]  # (run id, option) -> outcome


@dataclass
class DashboardData:
    """Where the pages read from: the run log and the workflows by name; today's spend and
    the answering of approvals when the dashboard runs inside ``frontdesk run``."""

    store: RunReading
    registry: Registry
    spend: Callable[[], dict[str, Any]] | None = None
    answer: Answer | None = None
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(24), repr=False)


@dataclass
class DashboardServer:
    """A running dashboard: its address, and how to stop it."""

    url: str
    runner: web.AppRunner
    token: str | None = field(default=None, repr=False)

    @property
    def link(self) -> str:
        """The address to open: it carries the token (the first visit makes it a cookie)."""
        return f"{self.url}?token={self.token}" if self.token else self.url

    async def close(self) -> None:
        await self.runner.cleanup()


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) only reaches this machine."""
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None, setting: str = "--host") -> None:
    """Refuse a non-loopback address without an explicitly set access token (``setting``
    names where the address came from, for the sentence)."""
    if not is_loopback(host) and not token:
        fix = "use --host 127.0.0.1" if setting == "--host" else f"set {setting}=127.0.0.1"
        raise DashboardRefused(
            f"refusing to serve the dashboard on {host} ({setting}): anyone who can reach it "
            f"could read your runs. Set {TOKEN_ENV} to a long random string, or {fix}.")


def refuse_unsafe_host(environ: Mapping[str, str]) -> None:
    """``frontdesk run``'s check, before anything starts: FRONTDESK_DASHBOARD_HOST beyond
    loopback needs FRONTDESK_DASHBOARD_TOKEN."""
    check_bind(environ.get(HOST_ENV) or DEFAULT_HOST, environ.get(TOKEN_ENV) or None, HOST_ENV)


def home_token(home: Path) -> str:
    """The token kept in ``home`` (made, readable by the owner only, at first start)."""
    path = home / TOKEN_FILE
    try:
        made = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        token = path.read_text(encoding="utf-8").strip()
        if token:
            return token
        path.unlink()  # an empty file (a crash while writing it): make a new one
        return home_token(home)
    token = secrets.token_urlsafe(32)
    with os.fdopen(made, "w", encoding="utf-8") as file:
        file.write(token + "\n")
    return token


def access_token(home: Path) -> str:
    """``FRONTDESK_DASHBOARD_TOKEN`` when set, else the one kept in ``home``."""
    return os.environ.get(TOKEN_ENV) or home_token(home)


def build_app(data: DashboardData, token: str | None = None) -> web.Application:
    """The aiohttp application: pages, static files, JSON endpoints, the access rule."""
    app = web.Application(middlewares=[_guard(token)])
    app.router.add_get("/", _page("runs.html"))
    app.router.add_get("/runs/{run_id}", _page("run.html"))
    app.router.add_get("/api/runs", _api_runs(data))
    app.router.add_get("/api/runs/{run_id}", _api_run(data))
    app.router.add_post("/api/runs/{run_id}/answer", _api_answer(data))
    app.router.add_static("/static/", STATIC, show_index=False, follow_symlinks=False)
    return app


async def start_dashboard(data: DashboardData, host: str = DEFAULT_HOST,
                          port: int = DEFAULT_PORT, token: str | None = None) -> DashboardServer:
    """Listen on ``host:port`` (port 0 picks a free one); returns once it accepts requests."""
    check_bind(host, token)
    # No access log: a ``?token=`` link would put the token in it.
    runner = web.AppRunner(build_app(data, token), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        raise DashboardRefused(f"cannot listen on {host}:{port}: {exc.strerror or exc}. "
                               "Pick another port with --port.") from exc
    bound = runner.addresses[0][1] if runner.addresses else port
    shown = f"[{host}]" if ":" in host else host
    return DashboardServer(f"http://{shown}:{bound}/", runner, token)


async def serve_dashboard(registry: Registry, settings: Settings, db: Database, *,
                          host: str | None = None,
                          port: int | None = None,
                          on_ready: Callable[[str], None] | None = None,
                          answer: Answer | None = None) -> None:
    """Serve until cancelled (``frontdesk run`` with FRONTDESK_DASHBOARD_PORT set);
    ``on_ready`` gets the link that carries the token."""
    setting = "--host" if host else HOST_ENV
    host = host or os.environ.get(HOST_ENV) or DEFAULT_HOST
    check_bind(host, os.environ.get(TOKEN_ENV) or None, setting)
    if port is None:
        port = DEFAULT_PORT if settings.dashboard_port is None else settings.dashboard_port
    # The database's reader: the pages read the last commit while the workflows write.
    from bot.dashboard.actions import spend_reader

    data = DashboardData(RunReading(db.reader), registry, spend_reader(settings, db), answer)
    server = await start_dashboard(data, host, port, access_token(settings.home))
    (on_ready or _log_url)(server.link)
    try:
        await asyncio.Event().wait()  # until cancelled
    finally:
        await server.close()


def _log_url(link: str) -> None:
    log.info("dashboard at %s", link.split("?", 1)[0])  # a log keeps no token


def _guard(token: str | None) -> Middleware:
    """The access rule, and the security headers on every answer."""

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        if token is None and not is_loopback(request.url.host or ""):
            return _refuse(403, "This dashboard only answers on 127.0.0.1 or localhost.")
        if token is not None:
            given = request.query.get("token")
            if given is not None and _same(given, token):  # a link: keep it as a cookie
                rest = {k: v for k, v in request.query.items() if k != "token"}
                target = str(request.rel_url.with_query(rest))
                # "//host" would leave the site: keep the redirect on this one
                target = "/" + target.lstrip("/\\")
                found = web.Response(status=302, headers={**HEADERS, "Location": target})
                found.set_cookie(COOKIE, token, httponly=True, samesite="Strict", path="/")
                return found
            bearer = _bearer(request.headers.get("Authorization", ""))
            if bearer is None:
                return _refuse(401, "A malformed Authorization header: send Authorization: "
                                    "Bearer … with the dashboard's access token.")
            offered = [request.cookies.get(COOKIE, ""), bearer]
            if not any(_same(value, token) for value in offered if value):
                return _refuse(401, "This dashboard needs its access token: open the link "
                                    "printed at start (?token=…), or send Authorization: "
                                    f"Bearer … ({TOKEN_ENV}, else FRONTDESK_HOME/"
                                    f"{TOKEN_FILE}).")
        try:
            response = await handler(request)
        except web.HTTPException as exc:
            exc.headers.update(HEADERS)
            raise
        response.headers.update(HEADERS)
        return response

    return guard


def _bearer(header: str) -> str | None:
    """The token an ``Authorization`` header offers ("" when there is none); None when the
    header is malformed (another scheme, spaces or bytes that are not ASCII)."""
    if not header:
        return ""
    match = _BEARER.fullmatch(header.strip(" \t"))
    return match.group(1) if match else None


def _same(given: str, token: str) -> bool:
    """Whether ``given`` is the token, in constant time; a value that was not UTF-8 (held
    with lone surrogates: a cookie, a query) is only a wrong one."""
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"),
                               token.encode("utf-8", "surrogateescape"))


def _refuse(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status, headers=HEADERS)


def _page(name: str) -> Handler:
    async def page(request: web.Request) -> web.StreamResponse:
        return web.FileResponse(STATIC / name, headers={"Content-Type": "text/html"})

    return page


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _api_runs(data: DashboardData) -> Handler:
    async def runs(request: web.Request) -> web.StreamResponse:
        status = request.query.get("status") or None
        if status is not None and status not in STATUSES:
            return _refuse(400, f"status must be one of {', '.join(STATUSES)}")
        try:
            limit = max(1, min(500, int(request.query.get("limit", "100"))))
            before = float(request.query["before"]) if request.query.get("before") else None
        except ValueError:
            return _refuse(400, "limit and before must be numbers")
        listed = list_runs(data.store, status, request.query.get("route") or None, limit,
                           before=before)
        listed.update(spend=data.spend() if data.spend else None,
                      can_answer=data.answer is not None, csrf=data.csrf)
        return web.json_response(listed, dumps=_dumps)

    return runs


def _api_run(data: DashboardData) -> Handler:
    async def run(request: web.Request) -> web.StreamResponse:
        detail = run_detail(data.store, data.registry, request.match_info["run_id"])
        if detail is None:
            return _refuse(404, "There is no such run.")
        return web.json_response(detail, dumps=_dumps)

    return run


def _api_answer(data: DashboardData) -> Handler:
    async def answer(request: web.Request) -> web.StreamResponse:
        if not _same(request.headers.get("X-CSRF-Token", ""), data.csrf):
            return _refuse(403, "This form is stale or forged: reload the page.")
        origin = request.headers.get("Origin")
        if origin is not None and origin != f"{request.scheme}://{request.host}":
            return _refuse(403, "Answers are only taken from this dashboard's own page.")
        if data.answer is None:
            return _refuse(409, "This dashboard only reads; answer in the chat, or open the "
                                "one `frontdesk run` serves (FRONTDESK_DASHBOARD_PORT).")
        try:
            body = await request.json()
        except ValueError:
            body = None
        option = body.get("answer") if isinstance(body, dict) else None
        if not isinstance(option, str) or not option:
            return _refuse(400, 'Send {"answer": "<one of the options>"}.')
        accepted, message = await data.answer(request.match_info["run_id"], option)
        return web.json_response({"accepted": accepted, "message": message},
                                 status=200 if accepted else 409, dumps=_dumps)

    return answer
