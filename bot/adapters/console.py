"""The console adapter: chat with Frontdesk in the terminal as its owner.

``frontdesk run`` with no chat token opens it. Each line you type is one message from the
owner; replies print as they leave the outbox, followed by a dim line with the route and what
the answer cost. An approval shows its options numbered: type the number or the word.
``/attach PATH [caption]`` sends a local file the way a chat platform sends one (its kind from
its MIME type); it exists only here, where the person typing owns the machine. A file a reply
carries (a booked meeting's ``.ics``) is saved under ``FRONTDESK_HOME/sent_files/`` (the
folder given as ``files_dir``) and named on a line of its own, after its caption.
On a terminal, lines are read with the stdlib's ``readline`` (editing, and a history kept in
``FRONTDESK_HOME/console_history``) on a daemon thread of its own, so Ctrl-C leaves at once
(a pool thread blocked in ``input`` would hold the exit until Enter) and the terminal's modes
are put back as they were. On a terminal an answer being written shows as a dim line that
grows in place (a live reply's draft, ``bot.delivery.live``), replaced by the answer itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import mimetypes
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from bot.adapters.base import Adapter
from bot.media.attachments import FileTooLarge
from bot.messages import (
    Attachment,
    Button,
    Inbound,
    IncomingMessage,
    LiveRefused,
    OutgoingFile,
    Reply,
    kind_of,
)

OWNER_CHAT = "console"
DIM, RESET = "\033[2m", "\033[0m"
CLEAR_LINE = "\r\033[K"  # back to the line's start, and erase it
PREVIEW_CHARS = 72  # the tail of an answer being written, on one terminal line
EXIT_WORDS = {"exit", "quit", "/exit", "/quit"}
ATTACH = "/attach"
mimetypes.add_type("text/markdown", ".md")  # not in every system's table
mimetypes.add_type("text/calendar", ".ics")
mimetypes.add_type("audio/ogg", ".oga")


def render(text: str, buttons: list[Button] | None) -> str:
    """A reply as the terminal shows it, options numbered."""
    if not buttons:
        return text
    options = "  ".join(f"[{n}] {b.label}" for n, b in enumerate(buttons, start=1))
    return f"{text}\n{options}  (type the number or the word)"


class ConsoleAdapter:
    """Prints what the gateway sends; the console owner is always the user ``owner``."""

    platform = "console"
    live_limit = 100_000  # the whole answer so far: the preview line keeps its tail itself
    caption_limit = 100_000  # a terminal prints any caption

    def __init__(self, out: TextIO | None = None, *, echo: bool = True,
                 files_dir: Path | None = None) -> None:
        self.out = out or sys.stdout
        self.echo = echo
        self.files_dir = files_dir  # where a reply's files are saved (None: not saved)
        self.sent: list[tuple[str, str]] = []  # (chat, text), for `frontdesk chat` and tests
        self.files: list[tuple[str, OutgoingFile, Path | None]] = []  # (chat, file, saved at)
        self.previews: list[str] = []  # what the dim preview line showed, in order
        self._ids = itertools.count(1)
        self._preview_shown = False

    def split(self, text: str) -> list[str]:
        """A terminal takes any length: one part."""
        return [text]

    async def send(self, chat_id: str, text: str, buttons: list[Button] | None = None, *,
                   key: str | None = None) -> str:
        """Print (or just collect) one reply."""
        shown = render(text, buttons)
        self.sent.append((chat_id, shown))
        self._clear_preview()
        if self.echo:
            prefix = "" if chat_id == OWNER_CHAT else f"[to {chat_id}] "
            print(f"{prefix}{shown}", file=self.out, flush=True)
        return str(next(self._ids))

    async def send_file(self, chat_id: str, file: OutgoingFile, caption: str = "",
                        buttons: list[Button] | None = None, *, key: str | None = None) -> str:
        """Print the caption and a line naming the file; save it under ``files_dir``."""
        saved = None
        if self.files_dir is not None:
            self.files_dir.mkdir(parents=True, exist_ok=True)
            # the name is ours (e.g. meeting-2026-03-03.ics), but never a path of its own
            saved = self.files_dir / f"{next(self._ids)}-{Path(file.name).name or 'file'}"
            saved.write_bytes(file.data)
        self.files.append((chat_id, file, saved))
        where = f"saved as {saved}" if saved else "not saved"
        line = f"📎 {Path(file.name).name} ({file.mime}, {len(file.data)} bytes; {where})"
        return await self.send(chat_id, f"{caption}\n{line}" if caption else line, buttons)

    async def owner_chat(self) -> str:
        """The owner is whoever sits at this terminal."""
        return OWNER_CHAT

    # -- live replies (bot.delivery.live): a dim line that grows, on a terminal only ----------
    def live_mode(self, chat_id: str, private: bool) -> str | None:
        """A preview line where there is a terminal to draw it on; else nothing before the
        answer (``frontdesk chat``, pipes, tests read whole replies)."""
        return "draft" if self.echo and self.out.isatty() else None

    async def draft(self, chat_id: str, draft_id: int, text: str) -> None:
        """Redraw the preview line with the end of the answer so far."""
        line = " ".join(text.split())
        line = line if len(line) <= PREVIEW_CHARS else "\u2026" + line[-(PREVIEW_CHARS - 1):]
        self.previews.append(line)
        print(f"{CLEAR_LINE}{DIM}{line}{RESET}", end="", file=self.out, flush=True)
        self._preview_shown = True

    async def post(self, chat_id: str, text: str) -> str:
        """Only previews here: nothing to send before the answer."""
        raise LiveRefused("the console shows a preview line only")

    async def edit(self, chat_id: str, message_id: str, text: str,
                   buttons: list[Button] | None = None, *, final: bool = False) -> None:
        """Printed lines cannot be edited."""
        raise LiveRefused("the console shows a preview line only")

    async def delete(self, chat_id: str, message_id: str) -> None:
        """Nothing is ever shown that would need deleting."""

    def _clear_preview(self) -> None:
        if self._preview_shown:
            print(CLEAR_LINE, end="", file=self.out, flush=True)
            self._preview_shown = False

    async def fetch_attachment(self, attachment: Attachment, max_bytes: int) -> bytes:
        """A local file (``/attach``, ``frontdesk chat --attach``), read from its path."""
        path = Path(attachment.ref)
        size = path.stat().st_size
        if size > max_bytes:
            raise FileTooLarge(size)
        return await asyncio.to_thread(path.read_bytes)


def file_attachment(path: str) -> Attachment:
    """A local file as a typed part: its kind from its MIME type. ValueError if it is not
    a readable file."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise ValueError(f"there is no file at {path}")
    mime = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
    return Attachment(kind_of(mime), mime, file.stat().st_size, file.name, str(file.resolve()))


def parse_attach(line: str) -> tuple[str, str] | None:
    """``/attach PATH [caption]`` as (path, caption); a PATH with spaces goes in quotes.
    None when the line is not an ``/attach``."""
    command, rest = line.strip().partition(" ")[::2]
    if command.lower() != ATTACH:
        return None
    rest = rest.strip()
    quote = rest[:1]
    if quote in {"'", '"'} and quote in rest[1:]:
        path, caption = rest[1:].partition(quote)[::2]
    else:
        path, caption = rest.partition(" ")[::2]
    return path, caption.strip()


def console_message(text: str, user: str | None = None,
                    attachments: tuple[Attachment, ...] = ()) -> IncomingMessage:
    """A message typed at the console: by the owner, or by ``user`` in their own chat."""
    if user is None:
        return IncomingMessage("console", OWNER_CHAT, uuid.uuid4().hex, "owner", text, "owner",
                               attachments=attachments)
    return IncomingMessage("console", f"guest:{user}", uuid.uuid4().hex, user, text, user,
                           attachments=attachments)


def typed_message(line: str) -> IncomingMessage | str:
    """The message a console line sends, or why an ``/attach`` line cannot be sent."""
    attach = parse_attach(line)
    if attach is None:
        return console_message(line)
    path, caption = attach
    if not path:
        return "Usage: /attach PATH [caption]"
    try:
        return console_message(caption, attachments=(file_attachment(path),))
    except ValueError as missing:
        return f"Can't attach that: {missing}."


def status_line(reply: Reply, dim: bool = True) -> str:
    """The unobtrusive line under each answer: route, model calls, cost (dim on a terminal)."""
    calls = reply.model_calls
    line = (f"  · {reply.route} · small {calls.get('small', 0)} · big {calls.get('big', 0)}"
            f" · ${reply.cost_usd:.4f}")
    return f"{DIM}{line}{RESET}" if dim else line


async def read_line(source: TextIO, prompt: str | None) -> str:
    """One line ('' at EOF) on a daemon thread; ``prompt``: read it with ``input`` (readline)."""
    loop = asyncio.get_running_loop()
    got: asyncio.Future[str] = loop.create_future()

    def give(line: str) -> None:
        if not got.done():
            got.set_result(line)

    def work() -> None:
        try:
            line = input(prompt) + "\n" if prompt is not None else source.readline()
        except (EOFError, OSError, ValueError):
            line = ""
        with contextlib.suppress(RuntimeError):  # the loop is gone: we are leaving anyway
            loop.call_soon_threadsafe(give, line)

    threading.Thread(target=work, name="console-input", daemon=True).start()
    return await got


@contextlib.contextmanager
def line_editing(history: Path) -> Iterator[None]:
    """readline with a saved history; the terminal's modes as they were afterwards."""
    import readline
    import termios

    fd = sys.stdin.fileno()
    modes = termios.tcgetattr(fd)
    readline.set_history_length(1000)
    with contextlib.suppress(OSError):
        readline.read_history_file(history)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            readline.write_history_file(history)
        termios.tcsetattr(fd, termios.TCSADRAIN, modes)


async def run_console(desk: Inbound[Adapter], home: Path, stdin: TextIO | None = None,
                      out: TextIO | None = None) -> None:
    """The interactive chat loop: read a line, answer it, until EOF or ``exit`` (``home``:
    where the line history and the files sent are kept)."""
    source = stdin or sys.stdin
    sink = out or sys.stdout
    if source is sys.stdin and sink is sys.stdout and source.isatty() and sink.isatty():
        with line_editing(home / "console_history"):
            await chat_loop(desk, home, source, sink, interactive=True)
    else:
        await chat_loop(desk, home, source, sink, interactive=False)


async def chat_loop(desk: Inbound[Adapter], home: Path, source: TextIO, sink: TextIO, *,
                    interactive: bool) -> None:
    adapter = ConsoleAdapter(sink, files_dir=home / "sent_files")
    await desk.attach(adapter)
    print("Frontdesk console — you are the owner. Type a message, /help, /attach PATH, "
          "or exit.", file=sink, flush=True)
    while True:
        if not interactive:
            print("> ", end="", file=sink, flush=True)
        line = await read_line(source, "> " if interactive else None)
        if not line:
            print(file=sink)
            return
        text = line.strip()
        if not text:
            continue
        if text.lower() in EXIT_WORDS:
            return
        message = typed_message(text)
        if isinstance(message, str):
            print(message, file=sink, flush=True)
            continue
        accepted = desk.accept(message)  # one line at a time: nothing can join it
        reply = await desk.process(accepted, gather=False) if accepted is not None else None
        if reply is not None:
            print(status_line(reply, dim=sink.isatty()), file=sink, flush=True)
