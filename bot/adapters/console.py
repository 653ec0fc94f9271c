"""The console adapter: chat with Frontdesk in the terminal as its owner.

``frontdesk run`` with no chat token opens it. Each line you type is one message from the
owner; replies print as they leave the outbox, followed by a dim line with the route and what
the answer cost. An approval shows its options numbered: type the number or the word.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
import uuid
from typing import TextIO

from bot.gateway import Gateway
from bot.messages import Button, IncomingMessage, Reply

OWNER_CHAT = "console"
DIM, RESET = "\033[2m", "\033[0m"
EXIT_WORDS = {"exit", "quit", "/exit", "/quit"}


def render(text: str, buttons: list[Button] | None) -> str:
    """A reply as the terminal shows it, options numbered."""
    if not buttons:
        return text
    options = "  ".join(f"[{n}] {b.label}" for n, b in enumerate(buttons, start=1))
    return f"{text}\n{options}  (type the number or the word)"


class ConsoleAdapter:
    """Prints what the gateway sends; the console owner is always the user ``owner``."""

    platform = "console"

    def __init__(self, out: TextIO | None = None, *, echo: bool = True) -> None:
        self.out = out or sys.stdout
        self.echo = echo
        self.sent: list[tuple[str, str]] = []  # (chat, text), for `frontdesk chat` and tests
        self._ids = itertools.count(1)

    def split(self, text: str) -> list[str]:
        """A terminal takes any length: one part."""
        return [text]

    async def send(self, chat_id: str, text: str, buttons: list[Button] | None = None, *,
                   key: str | None = None) -> str:
        """Print (or just collect) one reply."""
        shown = render(text, buttons)
        self.sent.append((chat_id, shown))
        if self.echo:
            prefix = "" if chat_id == OWNER_CHAT else f"[to {chat_id}] "
            print(f"{prefix}{shown}", file=self.out, flush=True)
        return str(next(self._ids))

    async def owner_chat(self) -> str:
        """The owner is whoever sits at this terminal."""
        return OWNER_CHAT


def console_message(text: str, user: str | None = None) -> IncomingMessage:
    """A message typed at the console: by the owner, or by ``user`` in their own chat."""
    if user is None:
        return IncomingMessage("console", OWNER_CHAT, uuid.uuid4().hex, "owner", text, "owner")
    return IncomingMessage("console", f"guest:{user}", uuid.uuid4().hex, user, text, user)


def status_line(reply: Reply, dim: bool = True) -> str:
    """The unobtrusive line under each answer: route, model calls, cost (dim on a terminal)."""
    calls = reply.model_calls
    line = (f"  · {reply.route} · small {calls.get('small', 0)} · big {calls.get('big', 0)}"
            f" · ${reply.cost_usd:.4f}")
    return f"{DIM}{line}{RESET}" if dim else line


async def run_console(gateway: Gateway, stdin: TextIO | None = None,
                      out: TextIO | None = None) -> None:
    """The interactive chat loop: read a line, answer it, until EOF or ``exit``."""
    source, sink = stdin or sys.stdin, out or sys.stdout
    adapter = ConsoleAdapter(sink)
    await gateway.attach(adapter)
    print("Frontdesk console — you are the owner. Type a message, /help, or exit.",
          file=sink, flush=True)
    while True:
        print("> ", end="", file=sink, flush=True)
        line = await asyncio.to_thread(source.readline)
        if not line:
            print(file=sink)
            return
        text = line.strip()
        if not text:
            continue
        if text.lower() in EXIT_WORDS:
            return
        reply = await gateway.handle(console_message(text))
        if reply is not None:
            print(status_line(reply, dim=sink.isatty()), file=sink, flush=True)
