"""`frontdesk memory add | search | forget`: the owner's notes, from the command line."""

from __future__ import annotations

import argparse
import sys

from bot.config.settings import Settings
from memory.notes import Memory, NoteTooLarge
from sqlitedb import connect

OWNER = "owner"


def main(args: argparse.Namespace, settings: Settings) -> int:
    """Run one memory action on the owner's notes in settings.database."""
    conn = connect(settings.database)
    try:
        memory = Memory(conn)
        if args.memory_command == "add":
            return _add(memory, args.text)
        if args.memory_command == "search":
            return _search(memory, args.query)
        return _forget(memory, args.id)
    finally:
        conn.close()


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
        print(f"{hit.id}\t{hit.snippet}")
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
