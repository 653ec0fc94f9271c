"""`frontdesk chat [TEXT] [--attach PATH] [--user ID] [--json]`: one message, then exit.

As the console owner by default, or with ``--user`` as another allowed person in their own
chat. ``--attach`` sends a file with it (TEXT is then its caption, and optional), through the
same path as a chat platform's files. ``--json`` prints only
``{"reply", "route", "run_id", "model_calls", "buttons"}``, ``buttons`` the reply's buttons as
``[{"label", "data"}]`` (``data``: the opaque token a press sends back; ``[]`` for none).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from bot.adapters.console import ConsoleAdapter, console_message, file_attachment
from bot.app import assemble
from bot.config.logs import setup_logging
from bot.config.settings import Settings
from bot.messages import Attachment, Reply


async def send_one(settings: Settings, text: str, user: str | None,
                   files: tuple[Attachment, ...] = ()) -> tuple[Reply, list[str]]:
    """The reply to one message (with ``files``), and what else was sent (owner notices)."""
    app = assemble(settings)
    gateway = app.chat.gateway
    await gateway.start()
    adapter = ConsoleAdapter(echo=False, files_dir=settings.home / "sent_files")
    await gateway.attach(adapter, recover=False)
    message = console_message(text, user, files)
    try:
        reply = await gateway.handle(message)
    finally:
        await app.tools.mcp.stop()
    assert reply is not None, "a fresh console message is never a duplicate"
    others = [sent for chat, sent in adapter.sent if chat != message.chat_id]
    return reply, others


def main(args: argparse.Namespace, settings: Settings) -> int:
    """Print the reply (and, without --json, any notice the owner got)."""
    setup_logging(settings)
    attach = getattr(args, "attach", None)
    if not args.text and not attach:
        print("frontdesk chat: give a TEXT, or a file with --attach PATH", file=sys.stderr)
        return 2
    try:
        files = (file_attachment(attach),) if attach else ()
    except ValueError as missing:
        print(f"frontdesk chat: {missing}", file=sys.stderr)
        return 2
    reply, others = asyncio.run(send_one(settings, args.text, args.user, files))
    if args.json:
        print(json.dumps({"reply": reply.text, "route": reply.route, "run_id": reply.run_id,
                          "model_calls": {"small": reply.model_calls.get("small", 0),
                                          "big": reply.model_calls.get("big", 0)},
                          "buttons": [{"label": b.label, "data": b.token}
                                      for b in reply.buttons]},
                         ensure_ascii=False))
        return 0
    print(reply.text)
    for notice in others:
        print(f"[to the owner] {notice}")
    return 0
