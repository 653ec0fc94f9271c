"""`frontdesk memory add | search | forget` on the owner's notes, and `export | import` of
every scope's notes (memory/transfer.py has the format), from the command line.

Note text is someone else's words (a guest's, an imported file's): what reaches the terminal
goes through the one sanitiser, ``shown`` for a snippet and ``shown_json`` for an export."""

from __future__ import annotations

import argparse
import io
import os
import sqlite3
import sys
from typing import BinaryIO

from bot.config.settings import Settings
from bot.config.text import shown, shown_json
from bot.schema import open_database
from memory.notes import Memory, NoteTooLarge
from memory.transfer import BadExport, export_notes, import_notes

OWNER = "owner"


def main(args: argparse.Namespace, settings: Settings) -> int:
    """Run one memory action on the notes in settings.database."""
    with open_database(settings.database) as db:  # the notes alone
        if args.memory_command == "export":
            # the writer: it maps no pages, which a whole-file read would keep resident
            return _export(db.writer, args.json)
        if args.memory_command == "import":
            return _import(db.writer, args.file)
        memory = Memory(db)
        if args.memory_command == "add":
            return _add(memory, args.text)
        if args.memory_command == "search":
            return _search(memory, args.query)
        return _forget(memory, args.id)


def _add(memory: Memory, text: str) -> int:
    """Save a note; print its id."""
    try:
        note_id = memory.add(OWNER, text)
    except (NoteTooLarge, ValueError) as exc:
        print(f"frontdesk memory: {exc}", file=sys.stderr)
        return 1
    print(f"saved note {note_id}")
    return 0


def _search(memory: Memory, query: str) -> int:
    """Print the best notes, one per line: id, then the snippet."""
    hits = memory.search(OWNER, query, k=10)
    if not hits:
        print("no notes match")
    for hit in hits:
        print(f"{hit.id}\t{shown(hit.snippet, 'terminal')}")
    return 0


def _forget(memory: Memory, raw_id: str) -> int:
    """Delete one note by id."""
    try:
        note_id = int(raw_id)
    except ValueError:
        print(f"frontdesk memory: {raw_id!r} is not a note id (a number, as shown by search)",
              file=sys.stderr)
        return 2
    if not memory.forget(OWNER, note_id):
        print(f"frontdesk memory: no note {note_id}", file=sys.stderr)
        return 1
    print(f"forgot note {note_id}")
    return 0


def _export(conn: sqlite3.Connection, as_array: bool) -> int:
    """Every note of every scope to stdout, as JSON Lines or (``--json``) one JSON array."""
    out = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="\n",
                           write_through=False)
    try:
        # the same values, with no character that could hide or reorder text on a terminal
        export_notes(conn, out, as_array=as_array, shown=shown_json)
        out.flush()
    except BrokenPipeError:
        # the reader stopped early (`| head`): nothing more to say, and nothing to flush
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    finally:
        out.detach()
    return 0


def _import(conn: sqlite3.Connection, path: str) -> int:
    """Add the notes of an export file (``-``: stdin); say what was done."""
    try:
        with _opened(path) as source:
            done = import_notes(conn, source)
    except OSError as exc:
        print(f"frontdesk memory import: cannot read {path} ({exc.strerror})", file=sys.stderr)
        return 1
    except BadExport as exc:
        print(f"frontdesk memory import: {path}: {exc}. Nothing was imported.", file=sys.stderr)
        return 1
    print(f"imported {_notes(done.imported)} ({done.new_ids:,} with new ids), "
          f"{done.already_there:,} already there")
    return 0


def _opened(path: str) -> BinaryIO:
    """The export file (``-``: stdin), as bytes: each line is decoded on its own, so a line
    that is not UTF-8 is named."""
    if path == "-":
        return sys.stdin.buffer
    return open(path, "rb")


def _notes(count: int) -> str:
    """``1 note``, ``120 notes``."""
    return f"{count:,} note" + ("" if count == 1 else "s")
