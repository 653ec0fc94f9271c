"""`frontdesk run`: start every adapter that has a token; with none, the console chat.

It runs until the first adapter stops (the console at end of input, an adapter that cannot
go on), Ctrl-C, or SIGTERM, which is how systemd stops it: then the sends under way finish
(for at most ``SEND_GRACE_S``) while no new one starts, everything else stops at once, and
the process exits 0. A message whose answer was not sent stays open in the inbox and is
answered once at the next start. Under systemd (``bot.config.logs.under_service_manager``)
it prints plain lines, and tells systemd READY=1 once every adapter serves (``Type=notify``).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from bot.app import App, assemble
from bot.backups.lock import claim_home
from bot.chat.commands import menu
from bot.cli.holdings import log_holdings
from bot.cli.main import version
from bot.config.banner import BANNER, Startup, announce, arrived, general_lines
from bot.config.logs import setup_logging, stderr_is_journal, under_service_manager
from bot.config.settings import Settings
from bot.delivery.outbox import Outbox
from bot.service.notify import notify
from bot.service.unit import TIMEOUT_STOP_S

SEND_GRACE_S = TIMEOUT_STOP_S / 3  # the rest of the stop timeout: closing, MCP servers
NO_CONSOLE = ("frontdesk: with no terminal, `frontdesk run` needs TELEGRAM_BOT_TOKEN or "
              "DISCORD_BOT_TOKEN in .env (the console chat needs a terminal).")
log = logging.getLogger(__name__)


def _entry(module: str, name: str) -> Callable[..., Awaitable[None]]:
    entry: Callable[..., Awaitable[None]] = getattr(importlib.import_module(module), name)
    return entry


async def serve(settings: Settings, environ: Mapping[str, str] | None = None) -> int:
    """Assemble the bot, recover, then run the adapters until they stop or SIGTERM."""
    environ = os.environ if environ is None else environ
    managed = under_service_manager(environ)
    adapters = bool(settings.telegram_bot_token or settings.discord_bot_token
                    or settings.email)
    if managed and not adapters and not sys.stdin.isatty():
        print(NO_CONSOLE, file=sys.stderr)
        return 2
    if settings.dashboard_port:  # a refused address is one line, before the banner
        from bot.dashboard.server import DashboardRefused, refuse_unsafe_host

        try:
            refuse_unsafe_host(environ)
        except DashboardRefused as exc:
            print(f"frontdesk run: {exc}", file=sys.stderr)
            return 2
    parts = [name for name, on in (("Telegram", settings.telegram_bot_token),
                                   ("Discord", settings.discord_bot_token),
                                   ("Email", settings.email),
                                   ("Dashboard", settings.dashboard_port)) if on]
    startup = Startup(parts, plain=managed, journal=stderr_is_journal(environ))
    BANNER.begin(startup)  # the process's banner: the adapters' lines count their parts
    terminated = asyncio.Event()  # from here on, a SIGTERM stops the run as cleanly as later
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, terminated.set)
    # `kill -USR1` logs what the process holds: how a long run is watched (bench/soak.py)
    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, log_holdings)
    app = assemble(settings)
    for line in general_lines(settings, (app.models.small.name, app.models.big.name),
                              version(), app.models.choices.chosen()):
        announce(line)
    await app.start()
    jobs: list[Awaitable[None]] = []
    desk = app.chat.gateway  # the adapters' inbound port
    # Each adapter's library (and the dashboard's) is imported only when configured.
    if settings.telegram_bot_token:
        jobs.append(_entry("bot.adapters.telegram.start", "run_telegram")(
            desk, app.delivery.cursors, settings, menu()))
    if settings.discord_bot_token:
        jobs.append(_entry("bot.adapters.discord.adapter", "run_discord")(
            desk, app.delivery.cursors, settings, menu()))
    if settings.email is not None:
        jobs.append(_entry("bot.adapters.email.start", "run_email")(
            desk, app.delivery.cursors, settings))
    if settings.dashboard_port:
        jobs.append(_entry("bot.dashboard.server", "serve_dashboard")(
            app.flows.runs.registry, settings, app.db, on_ready=dashboard_ready,
            answer=app.answer_from_dashboard))
    if not adapters:
        from bot.adapters.console import run_console

        announce("  Console:    no TELEGRAM_BOT_TOKEN or DISCORD_BOT_TOKEN: chatting here "
                 "(Ctrl-D or Ctrl-C leaves)")
        jobs.append(run_console(desk, settings.home))
    background = [asyncio.create_task(job) for job in app.serving()]
    background.append(asyncio.create_task(report_ready(startup, parts, managed, environ)))
    tasks = [asyncio.create_task(_stop_reason(job)) for job in jobs]
    return await run_until_stopped(app, tasks, background, terminated, environ)


def dashboard_ready(link: str) -> None:
    """The dashboard listens: its banner line (the link carrying the access token), and one
    part of the start done."""
    announce(f"  Dashboard:  {link}")
    arrived("Dashboard")


async def report_ready(startup: Startup, parts: list[str], managed: bool,
                       environ: Mapping[str, str]) -> None:
    """Once every adapter serves: READY=1 to systemd (when it listens), and a line."""
    await startup.ready.wait()
    serving = ", ".join(parts) or "the console"
    if notify("READY=1", f"STATUS=Serving {serving}", environ=environ) or managed:
        announce(f"  Ready:      serving {serving}")


async def run_until_stopped(app: App, tasks: list[asyncio.Task[str | None]],
                            background: list[asyncio.Task[None]], terminated: asyncio.Event,
                            environ: Mapping[str, str]) -> int:
    """Wait for the first job to end (the console at EOF, an adapter that fails) or SIGTERM
    (``terminated``); stop everything; the exit status."""
    stop_signal = asyncio.create_task(terminated.wait())
    waited: list[asyncio.Task[Any]] = [*tasks, stop_signal]
    done: set[asyncio.Task[Any]] = set()
    try:
        done, _ = await asyncio.wait(waited, return_when=asyncio.FIRST_COMPLETED)
        if stop_signal in done:
            notify("STOPPING=1", environ=environ)
            announce("  Stopping:   SIGTERM; the sends under way finish first")
            # then nothing awaits before the cancel
            await hold_sends(app.delivery.outbox, SEND_GRACE_S)
    finally:
        asyncio.get_running_loop().remove_signal_handler(signal.SIGTERM)
        asyncio.get_running_loop().remove_signal_handler(signal.SIGUSR1)
        for task in [*waited, *background]:
            task.cancel()
        await asyncio.gather(*tasks, *background, stop_signal, return_exceptions=True)
        await app.close()
    if stop_signal in done:
        announce("  Stopped:    what was not answered is answered at the next start")
    reasons = [reason for task in tasks if task in done and (reason := task.result())]
    for reason in reasons:
        print(reason, file=sys.stderr)
    return 1 if reasons else 0


async def hold_sends(outbox: Outbox, grace: float) -> None:
    """Let the sends under way finish, then hold every chat's send lock so none starts: a
    part is then either sent and marked, or still unsent for the next start (never cut off
    between the platform's accept and its mark, which would send it twice). A send still
    under way after ``grace`` seconds (flood control) is cut off after all."""
    try:
        async with asyncio.timeout(grace):
            await outbox.send_locks.hold_all()
    except TimeoutError:
        log.warning("a send was still under way after %.0f s; stopping anyway", grace)


async def _stop_reason(job: Awaitable[None]) -> str | None:
    """Run an adapter; its one-sentence reason to stop (SystemExit), caught inside the task:
    a SystemExit escaping a task would reach the event loop as a stack trace."""
    try:
        await job
    except SystemExit as stop:
        return str(stop.code or "stopped")
    return None


def main(args: argparse.Namespace, settings: Settings) -> int:
    """Run until interrupted."""
    setup_logging(settings, journal=stderr_is_journal(os.environ))
    try:
        with claim_home(settings.home):  # `frontdesk restore` refuses while this bot runs
            return asyncio.run(serve(settings))
    except KeyboardInterrupt:
        print("bye", file=sys.stderr)
        return 0
