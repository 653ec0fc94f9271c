"""Notes out and back in: every scope's notes written as JSON Lines (or one JSON array), and
read back keeping ids where they are free, skipping notes already there, all or nothing.

The format, version 1, is one JSON object a line. The first names the format and its
version (a reader refuses a version it does not know) and counts the notes, so a file cut
short is refused instead of half-read; every other line is one note::

    {"format": "frontdesk-notes", "version": 1, "exported_at": 1714650000.0, "notes": 2}
    {"id": 1, "scope": "owner", "text": "The boiler service is on 3 May", "created_at": …}
    {"id": 1000000001, "scope": "telegram:42", "text": "Prefers mornings", "created_at": …}

The array form holds the same objects, header first. Both are written as they are read from
the database, one note at a time; JSON Lines is read back the same way (staged in a
temporary table), while the array form is parsed whole by ``json``, so it suits smaller
exports (up to ``MAX_ARRAY_CHARS``). No line is read past ``MAX_LINE_BYTES``, so one huge
line costs no more memory than that before it is refused. A note is already there when its
scope holds a note with the same text and the same created time (times are written exactly,
as Python's shortest round-tripping float). Only the framing is ours; ``json`` does every
encoding and parsing.

What a file may bring in is what Frontdesk writes: scopes of the shapes it makes, and ids it
can export again. A note keeps its id only while its scope's number is below
``KEPT_NUMBERS`` (half of them): one id near the top must not push every scope made later
past ``MAX_ID``; above that, its scope is numbered as a new one and the note gets a new id.
"""

from __future__ import annotations

import codecs
import itertools
import json
import math
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO, TextIO

from memory.impact import index_notes
from memory.notes import MAX_NOTE_CHARS, checked_note
from memory.scopes import (
    LAST_NUMBER,
    MAX_ID,
    NOTES,
    STRIDE,
    claim,
    is_scope,
    reserve,
    scope_number,
)
from sqlitedb import transaction

FORMAT = "frontdesk-notes"
VERSION = 1
# the longest line a note can take: every character written as a \uXXXX\uXXXX pair, plus
# its scope, id and time, with room to spare
MAX_LINE_BYTES = 1 << 20
MAX_ARRAY_CHARS = 16_000_000  # the array form is parsed whole: beyond this, use JSON Lines
KEPT_NUMBERS = LAST_NUMBER // 2  # a file's scope numbers kept as they are: below this


class BadExport(ValueError):
    """The file is not an export this version can read; the message names the line."""


@dataclass(frozen=True)
class Imported:
    """What an import did: notes added, how many of them got a new id, and notes skipped
    because they were already there (or twice in the file)."""

    imported: int
    new_ids: int
    already_there: int


def _as_is(line: str) -> str:
    """The line unchanged: an export with no sanitiser."""
    return line


def export_notes(conn: sqlite3.Connection, out: TextIO, *, as_array: bool = False,
                 shown: Callable[[str], str] = _as_is) -> int:
    """Write every note of every scope to ``out``, oldest id first; return how many. Each
    note's JSON goes through ``shown`` (the caller's sanitiser: it may write characters as
    ``\\uXXXX`` escapes, which leave the value unchanged)."""
    conn.execute("BEGIN")  # one snapshot, so the header's count and the lines agree
    try:
        count: int = conn.execute("SELECT COUNT(*) FROM memory_notes").fetchone()[0]
        header = {"format": FORMAT, "version": VERSION, "exported_at": time.time(),
                  "notes": count}
        rows = conn.execute("SELECT id, scope, text, created_at FROM memory_notes ORDER BY id")
        out.write("[\n" if as_array else "")
        out.write(json.dumps(header))
        for note_id, scope, text, created_at in rows:
            out.write(",\n" if as_array else "\n")
            out.write(shown(json.dumps({"id": note_id, "scope": scope, "text": text,
                                        "created_at": created_at}, ensure_ascii=False)))
        out.write("\n]\n" if as_array else "\n")
    finally:
        conn.execute("COMMIT")
    return count


def import_notes(conn: sqlite3.Connection, source: BinaryIO) -> Imported:
    """Add the notes of an export (either form) in one transaction; BadExport, with nothing
    written, if any line is not a readable note."""
    conn.execute("DROP TABLE IF EXISTS temp.memory_import")
    conn.execute("CREATE TEMP TABLE memory_import (position INTEGER PRIMARY KEY, id INTEGER, "
                 "scope TEXT, text TEXT, created_at REAL, UNIQUE (scope, created_at, text))")
    try:
        read, staged = _stage(conn, source)
        with transaction(conn):
            return _merge(conn, read, staged)
    finally:
        conn.execute("DROP TABLE IF EXISTS temp.memory_import")


def _stage(conn: sqlite3.Connection, source: BinaryIO) -> tuple[int, int]:
    """Check every note of ``source`` into the temporary table (a note twice in the file is
    kept once); return how many notes the file holds and how many were kept."""
    objects = _objects(source)
    where, header = next(objects, ("line 1", None))
    _check_header(where, header)
    read = 0

    def notes() -> Iterator[tuple[int, int, str, str, float]]:
        nonlocal read
        for where, item in objects:
            read += 1
            yield (read, *_note(where, item))

    conn.execute("BEGIN")  # the temporary table only: the database is not locked yet
    try:
        staged = conn.executemany(
            "INSERT OR IGNORE INTO temp.memory_import (position, id, scope, text, created_at) "
            "VALUES (?, ?, ?, ?, ?)", notes()).rowcount
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    assert isinstance(header, dict)
    expected = header.get("notes")
    if isinstance(expected, int) and expected != read:
        raise BadExport(f"the file holds {read:,} notes but its first line says {expected:,}: "
                        "it was cut short or edited")
    return read, max(staged, 0)


def _merge(conn: sqlite3.Connection, read: int, staged: int) -> Imported:
    """Inside a transaction: add the staged notes not already there, each with its own id
    when that id is free and in its scope's range, else a new one."""
    present = conn.execute(
        "DELETE FROM temp.memory_import WHERE position IN (SELECT i.position FROM memory_notes n "
        "CROSS JOIN temp.memory_import i ON i.scope = n.scope AND i.created_at = n.created_at "
        "AND i.text = n.text)").rowcount
    numbers: dict[str, int] = {}
    floor = conn.execute(f"SELECT COALESCE(MAX(id / {STRIDE}), 0) + 1 FROM temp.memory_import "
                         f"WHERE id / {STRIDE} < {KEPT_NUMBERS}").fetchone()[0]
    imported = new_ids = 0
    added: list[tuple[int, str]] = []
    for wanted, scope, text, created_at in conn.execute(
            "SELECT id, scope, text, created_at FROM temp.memory_import ORDER BY position"):
        if scope not in numbers:  # a number too high to keep: the next free one (-1)
            kept = wanted // STRIDE if wanted // STRIDE < KEPT_NUMBERS else -1
            numbers[scope] = scope_number(conn, scope, kept, floor)
        if wanted // STRIDE == numbers[scope] and wanted % STRIDE and conn.execute(
                "SELECT 1 FROM memory_notes WHERE id = ?", (wanted,)).fetchone() is None:
            note_id = wanted
            claim(conn, NOTES, scope, note_id)
        else:
            note_id = reserve(conn, NOTES, scope, 1)
            new_ids += 1
        conn.execute("INSERT INTO memory_notes (id, scope, text, created_at) VALUES (?, ?, ?, ?)",
                     (note_id, scope, text, created_at))
        added.append((note_id, text))
        imported += 1
    index_notes(conn, added)
    return Imported(imported=imported, new_ids=new_ids, already_there=read - staged + present)


def _objects(source: BinaryIO) -> Iterator[tuple[str, Any]]:
    """Each JSON value of the file with where it is (``line 7``, ``item 7 of the array``)."""
    lines = _lines(source)
    number, first = next(((n, line) for n, line in lines if line.strip()), (0, ""))
    if not first:
        return
    if first.lstrip().startswith("["):
        yield from _array(_whole(first, lines), number)
        return
    yield f"line {number}", _decoded(first, f"line {number}")
    for number, line in lines:
        if line.strip():
            yield f"line {number}", _decoded(line, f"line {number}")


def _lines(source: BinaryIO) -> Iterator[tuple[int, str]]:
    """Each line of the file as text, numbered from 1 (a byte-order mark is skipped); a line
    longer than MAX_LINE_BYTES is refused after reading no more than that of it."""
    for number in itertools.count(1):
        raw = source.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        if len(raw) > MAX_LINE_BYTES:
            raise BadExport(f"line {number}: longer than {MAX_LINE_BYTES:,} bytes, which no "
                            f"note of at most {MAX_NOTE_CHARS:,} characters needs")
        try:
            yield number, (raw.removeprefix(codecs.BOM_UTF8) if number == 1 else raw).decode()
        except UnicodeDecodeError as exc:
            raise BadExport(f"line {number}: not UTF-8 text ({exc.reason})") from None


def _whole(first: str, lines: Iterator[tuple[int, str]]) -> str:
    """The array form's text, refused past MAX_ARRAY_CHARS (it is parsed whole)."""
    parts = [first]
    size = len(first)
    for number, line in lines:
        size += len(line)
        if size > MAX_ARRAY_CHARS:
            raise BadExport(f"line {number}: the JSON array form is read whole, up to "
                            f"{MAX_ARRAY_CHARS:,} characters; export without --json (JSON "
                            "Lines) to move more")
        parts.append(line)
    return "".join(parts)


def _array(text: str, first_line: int) -> Iterator[tuple[str, Any]]:
    """The items of the array form."""
    try:
        items = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadExport(f"line {first_line + exc.lineno - 1}: not JSON ({exc.msg}, column "
                        f"{exc.colno})") from None
    if not isinstance(items, list):
        raise BadExport(f"line {first_line}: not one JSON array")
    for index, item in enumerate(items, start=1):
        yield f"item {index} of the array", item


def _decoded(line: str, where: str) -> Any:
    """One line's JSON value."""
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise BadExport(f"{where}: not JSON ({exc.msg}, column {exc.colno})") from None


def _check_header(where: str, header: Any) -> None:
    """Refuse a file that does not start with the header of a version we read."""
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise BadExport(f"{where}: not a Frontdesk notes export (it starts with "
                        f'{{"format": "{FORMAT}", "version": {VERSION}, …}})')
    version = header.get("version")
    if version != VERSION:
        raise BadExport(f"{where}: this export is format version {version}; this Frontdesk "
                        f"reads version {VERSION} (upgrade Frontdesk to import it)")


def _note(where: str, item: Any) -> tuple[int, str, str, float]:
    """One note's id, scope, text (as it would be stored) and created time, checked."""
    if not isinstance(item, dict):
        raise BadExport(f"{where}: a note is a JSON object with id, scope, text, created_at")
    note_id = item.get("id")
    scope = item.get("scope")
    text = item.get("text")
    created_at = item.get("created_at")
    if not isinstance(note_id, int) or isinstance(note_id, bool) or not 1 <= note_id <= MAX_ID:
        raise BadExport(f'{where}: "id" must be a whole number from 1 to {MAX_ID}')
    if not isinstance(scope, str) or not is_scope(scope):
        raise BadExport(f'{where}: "scope" must be "owner", "<platform>:<user id>" or '
                        '"<platform>:chat:<chat id>" (a lowercase platform, an id of visible '
                        'ASCII characters), as Frontdesk writes it')
    if not isinstance(text, str):
        raise BadExport(f'{where}: "text" must be a string')
    if not isinstance(created_at, int | float) or isinstance(created_at, bool) \
            or not math.isfinite(created_at):
        raise BadExport(f'{where}: "created_at" must be a time in seconds since 1970')
    try:
        return note_id, scope, checked_note(text), float(created_at)
    except ValueError as exc:
        raise BadExport(f"{where}: {exc}") from None
