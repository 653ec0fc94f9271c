"""`frontdesk run`: start every adapter that has a token; with none, the console chat."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import sys
from collections.abc import Awaitable, Callable

from bot.app import assemble
from bot.chat.gateway import Gateway
from bot.cli.main import version
from bot.config.banner import announce, general_lines
from bot.config.logs import setup_logging
from bot.config.settings import Settings
from bot.reminders.timer import schedule_briefing

EXPIRY_CHECK_S = 30.0
log = logging.getLogger(__name__)


async def expire_forever(gateway: Gateway) -> None:
    """Now and then, let overdue approvals follow their expiry route."""
    while True:
        await asyncio.sleep(EXPIRY_CHECK_S)
        try:
            await gateway.expire()
        except Exception:
            log.exception("expiring waits failed")


def _entry(module: str, name: str) -> Callable[..., Awaitable[None]]:
    entry: Callable[..., Awaitable[None]] = getattr(importlib.import_module(module), name)
    return entry


async def serve(settings: Settings) -> int:
    """Assemble the bot, recover, then run the adapters until they stop."""
    app = assemble(settings)
    for line in general_lines(settings, (app.models.small.name, app.models.big.name),
                              version()):
        announce(line)
    gateway = app.gateway
    await gateway.start()
    # FRONTDESK_BRIEF_AT is a daily task of the reminder timer (unset: its task cancelled).
    schedule_briefing(app.reminders, settings.brief_at, app.owner.zone(),
                      app.notifier.targets("")[0])
    jobs: list[Awaitable[None]] = []
    # Each adapter's library (and the dashboard's) is imported only when configured.
    if settings.telegram_bot_token:
        jobs.append(_entry("bot.adapters.telegram.start", "run_telegram")(
            gateway, app.ledger, settings))
    if settings.discord_bot_token:
        jobs.append(_entry("bot.adapters.discord.adapter", "run_discord")(
            gateway, app.ledger, settings))
    if settings.dashboard_port:
        from bot.dashboard.actions import answer_wait

        owners = app.access.owners
        jobs.append(_entry("bot.dashboard.server", "serve_dashboard")(
            app.runs.registry, settings, on_ready=lambda url: announce(f"  Dashboard:  {url}"),
            answer=lambda run_id, option: answer_wait(app.store, owners, gateway, run_id,
                                                      option)))
    if not (settings.telegram_bot_token or settings.discord_bot_token):
        from bot.adapters.console import run_console

        announce("  Console:    no TELEGRAM_BOT_TOKEN or DISCORD_BOT_TOKEN: chatting here "
                 "(Ctrl-D or Ctrl-C leaves)")
        jobs.append(run_console(gateway))
    await app.wakeup.listen(app.scheduler.poke)  # reminders set by `frontdesk chat`
    background = [asyncio.create_task(expire_forever(gateway)),
                  asyncio.create_task(app.scheduler.run())]  # reminders
    tasks = [asyncio.ensure_future(_stop_reason(job)) for job in jobs]
    try:  # the first job to end (the console at EOF, an adapter that fails) ends the process
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in [*tasks, *background]:
            task.cancel()
        await asyncio.gather(*tasks, *background, return_exceptions=True)
        await app.close()
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
