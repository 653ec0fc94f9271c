"""`frontdesk chat TEXT [--user ID] [--json]`: one message through the gateway, then exit.

As the console owner by default, or with ``--user`` as another allowed person in their own
chat. ``--json`` prints only ``{"reply", "route", "run_id", "model_calls"}`` (design §5).
"""

from __future__ import annotations

import argparse
import asyncio
import json

from bot.adapters.console import ConsoleAdapter, console_message
from bot.gateway import Gateway
from bot.logs import setup_logging
from bot.messages import Reply
from bot.services import Services
from bot.settings import Settings


async def send_one(settings: Settings, text: str, user: str | None) -> tuple[Reply, list[str]]:
    """The reply to one message, and what else was sent (notices to the owner)."""
    services = Services.from_settings(settings)
    gateway = Gateway(services)
    await gateway.start()
    adapter = ConsoleAdapter(echo=False)
    await gateway.attach(adapter, recover=False)
    message = console_message(text, user)
    try:
        reply = await gateway.handle(message)
    finally:
        await services.stop_tools()
    assert reply is not None, "a fresh console message is never a duplicate"
    others = [sent for chat, sent in adapter.sent if chat != message.chat_id]
    return reply, others


def main(args: argparse.Namespace, settings: Settings) -> int:
    """Print the reply (and, without --json, any notice the owner got)."""
    setup_logging(settings)
    reply, others = asyncio.run(send_one(settings, args.text, args.user))
    if args.json:
        print(json.dumps({"reply": reply.text, "route": reply.route, "run_id": reply.run_id,
                          "model_calls": {"small": reply.model_calls.get("small", 0),
                                          "big": reply.model_calls.get("big", 0)}},
                         ensure_ascii=False))
        return 0
    print(reply.text)
    for notice in others:
        print(f"[to the owner] {notice}")
    return 0
