"""`frontdesk run`: start every adapter that has a token; with none, the console chat."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import sys
from collections.abc import Awaitable, Callable
from datetime import datetime

from bot.gateway import Gateway
from bot.logs import setup_logging
from bot.services import Services
from bot.settings import Settings
from graphs.workflows.brief import daily

EXPIRY_CHECK_S = 30.0
BRIEF_CURSOR = "brief:last_day"  # the ledger cursor holding the last briefing's day
log = logging.getLogger(__name__)


async def expire_forever(gateway: Gateway) -> None:
    """Now and then, let overdue approvals follow their expiry route."""
    while True:
        await asyncio.sleep(EXPIRY_CHECK_S)
        try:
            await gateway.expire()
        except Exception:
            log.exception("expiring waits failed")


async def brief_daily(gateway: Gateway, services: Services) -> None:
    """FRONTDESK_BRIEF_AT: the briefing every day in the owner's chat; one missed while the
    bot was down is sent once on start (the last day sent is kept in the ledger's cursors)."""
    ledger, zone = services.ledger, services.owner_zone()
    await daily(services.settings.brief_at or "", zone,
                last_sent=lambda: ledger.cursor(BRIEF_CURSOR),
                mark_sent=lambda day: ledger.set_cursor(BRIEF_CURSOR, day),
                send=gateway.scheduled_brief, clock=lambda: datetime.now(zone))


def _entry(module: str, name: str) -> Callable[..., Awaitable[None]]:
    entry: Callable[..., Awaitable[None]] = getattr(importlib.import_module(module), name)
    return entry


async def serve(settings: Settings) -> int:
    """Build the services, recover, then run the adapters until they stop."""
    services = Services.from_settings(settings)
    gateway = Gateway(services)
    await gateway.start()
    jobs: list[Awaitable[None]] = []
    # Each adapter's library (and the dashboard's) is imported only when configured.
    if settings.telegram_bot_token:
        jobs.append(_entry("bot.adapters.telegram_start", "run_telegram")(
            gateway, services.ledger, settings))
    if settings.discord_bot_token:
        jobs.append(_entry("bot.adapters.discord", "run_discord")(
            gateway, services.ledger, settings))
    if settings.dashboard_port:
        jobs.append(_entry("bot.dashboard", "serve_dashboard")(services, settings))
    if not (settings.telegram_bot_token or settings.discord_bot_token):
        from bot.adapters.console import run_console

        jobs.append(run_console(gateway))
    background = [asyncio.create_task(expire_forever(gateway)),
                  asyncio.create_task(services.scheduler.run())]  # reminders
    if settings.brief_at:
        background.append(asyncio.create_task(brief_daily(gateway, services)))
    tasks = [asyncio.ensure_future(_stop_reason(job)) for job in jobs]
    try:  # the first job to end (the console at EOF, an adapter that fails) ends the process
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in [*tasks, *background]:
            task.cancel()
        await asyncio.gather(*tasks, *background, return_exceptions=True)
        await services.stop_tools()
    reasons = [reason for task in done if (reason := task.result())]
    for reason in reasons:
        print(reason, file=sys.stderr)
    return 1 if reasons else 0


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
    setup_logging(settings)
    try:
        return asyncio.run(serve(settings))
    except KeyboardInterrupt:
        print("bye", file=sys.stderr)
        return 0
