"""A hostile notes file through the real `frontdesk memory import`: look-alike scopes, a line
too long to hold, an id near the top; and note text shown on the terminal only sanitised."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memory.notes import Memory
from memory.schema import MIGRATIONS
from memory.scopes import LAST_NUMBER, MAX_ID, STRIDE
from sqlitedb.database import Database
from tests.memory.test_memory_transfer import GOOD, frontdesk, notes
from tests.support.child_process import clean_env


def header(count: int) -> str:
    return json.dumps({"format": "frontdesk-notes", "version": 1, "exported_at": 1.0,
                       "notes": count})


def note_line(note_id: int, scope: str, text: str, created_at: float = 1700000000.5) -> str:
    return json.dumps({"id": note_id, "scope": scope, "text": text, "created_at": created_at})


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("scope", ["owner\u202e", "owner\n", "\x1b[2Jowner", "\u043ewner",
                                   "Owner", " owner", "telegram:", "telegram:4 2",
                                   "tele\u200bgram:42", "telegram:42\u202e", ":42"])
def test_a_look_alike_scope_is_refused_and_nothing_is_written(
        tmp_path: Path, scope: str) -> None:
    home = tmp_path / "home"
    assert frontdesk(home, "add", "a note of this home").returncode == 0
    before = notes(home)
    bad = write(tmp_path / "bad.jsonl", [header(2), GOOD[1], note_line(2, scope, "sneaky")])
    done = frontdesk(home, "import", str(bad))
    assert done.returncode == 1, done.stdout
    assert done.stderr.startswith('frontdesk memory import: ') and \
        'line 3: "scope" must be "owner", "<platform>:<user id>"' in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "\x1b" not in done.stderr
    assert notes(home) == before


def test_every_shape_frontdesk_makes_is_imported(tmp_path: Path) -> None:
    scopes = ["owner", "telegram:42", "telegram:chat:-100123", "discord:7",
              "console:anna", "console:chat:guest:anna"]
    lines = [note_line(1 + n * STRIDE, scope, f"note of {scope}") for n, scope in
             enumerate(scopes)]
    done = frontdesk(tmp_path / "home", "import",
                     str(write(tmp_path / "ok.jsonl", [header(len(lines)), *lines])))
    assert done.returncode == 0, done.stderr
    assert {note[1] for note in notes(tmp_path / "home")} == set(scopes)


def test_note_text_reaches_the_terminal_only_sanitised(tmp_path: Path) -> None:
    hostile = "\x1b[2J\x1b]0;owned\x07boiler \u202eevil\u202c service\x9b31m on 3 May"
    home = tmp_path / "home"
    file = write(tmp_path / "notes.jsonl", [header(1), note_line(1, "owner", hostile)])
    assert frontdesk(home, "import", str(file)).returncode == 0
    assert notes(home)[0][2] == hostile  # stored as written: only its showing is sanitised

    found = frontdesk(home, "search", "boiler")
    assert found.returncode == 0 and found.stdout.startswith("1\t"), found.stdout
    assert "[boiler]" in found.stdout and "service" in found.stdout
    for control in ("\x1b", "\x07", "\u202e", "\u202c", "\x9b"):
        assert control not in found.stdout

    for form in ((), ("--json",)):
        exported = frontdesk(home, "export", *form)
        assert exported.returncode == 0, exported.stderr
        for control in ("\x1b", "\x07", "\u202e", "\u202c", "\x9b"):
            assert control not in exported.stdout
        # the same value all the same: it comes back exactly
        again = tmp_path / f"again{len(form)}"
        done = frontdesk(again, "import", "-", stdin=exported.stdout)
        assert done.returncode == 0, done.stderr
        assert notes(again) == notes(home)


# Run from a small parent: a child forked from the (large) test process would count the
# test's own memory in its peak, which Linux keeps across exec.
MEASURE = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(json.dumps([done.returncode, done.stderr,
                  resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))
""".replace("import resource", "import json, resource")


def measured_import(home: Path, file: Path) -> tuple[int, str, int]:
    """``frontdesk memory import FILE`` on ``home``: exit status, stderr, peak RSS in KiB."""
    env = clean_env(FRONTDESK_HOME=str(home))
    done = subprocess.run([sys.executable, "-c", MEASURE, sys.executable, "-m", "bot.cli.main",
                           "memory", "import", str(file)], cwd=home.parent, env=env,
                          capture_output=True, text=True, timeout=120, check=True)
    status, stderr, peak = json.loads(done.stdout)
    return int(status), str(stderr), int(peak)


def test_one_huge_line_is_refused_without_being_held(tmp_path: Path) -> None:
    size = 50_000_000
    huge = tmp_path / "huge.jsonl"
    with huge.open("w", encoding="utf-8") as out:
        out.write(header(2) + "\n" + GOOD[1] + "\n")
        out.write('{"id": 2, "scope": "owner", "text": "')
        for _ in range(size // 1_000_000):
            out.write("x" * 1_000_000)
        out.write('", "created_at": 1.0}\n')
    small = write(tmp_path / "small.jsonl", GOOD)

    status, stderr, peak_huge = measured_import(tmp_path / "home", huge)
    assert status == 1
    assert "line 3: longer than 1,048,576 bytes" in stderr and "Nothing was imported" in stderr
    assert len(stderr.strip().splitlines()) == 1, stderr
    assert notes(tmp_path / "home") == []
    status, stderr, peak_small = measured_import(tmp_path / "other", small)
    assert status == 0, stderr
    # reading the line whole would add at least its 50 MB; a capped read adds about 1 MB
    assert (peak_huge - peak_small) * 1024 < size / 10, (peak_huge, peak_small)


def test_an_array_too_large_to_parse_whole_is_refused_naming_the_line(tmp_path: Path) -> None:
    filler = [note_line(n, "owner", f"{n} " + "y" * 900_000) + "," for n in range(1, 20)]
    big = write(tmp_path / "big.json", ["[", header(19) + ",", *filler, "]"])
    done = frontdesk(tmp_path / "home", "import", str(big))
    assert done.returncode == 1
    assert "line 20: the JSON array form is read whole, up to 16,000,000 characters" in \
        done.stderr, done.stderr
    assert notes(tmp_path / "home") == []


def test_an_id_near_the_top_does_not_break_later_exports(tmp_path: Path) -> None:
    home = tmp_path / "home"
    top = write(tmp_path / "top.jsonl", [header(2), GOOD[1],
                                         note_line(2**53 - 2, "telegram:9", "near the top")])
    done = frontdesk(home, "import", str(top))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "imported 2 notes (1 with new ids), 0 already there"
    db = Database(home / "frontdesk.db", migrations=MIGRATIONS)
    memory = Memory(db)
    later = [memory.add(f"discord:{n}", f"a later scope {n}") for n in range(3)]
    db.close()
    assert max(note[0] for note in notes(home)) < LAST_NUMBER // 2 * STRIDE
    assert all(note_id <= MAX_ID for note_id in later)

    # the database's own export reads back, whole, in a fresh home
    exported = frontdesk(home, "export")
    assert exported.returncode == 0, exported.stderr
    moved = tmp_path / "moved"
    done = frontdesk(moved, "import", "-", stdin=exported.stdout)
    assert done.returncode == 0, done.stderr
    assert notes(moved) == notes(home)


def test_a_scope_numbered_at_the_last_leaves_no_id_past_the_top(tmp_path: Path) -> None:
    # a database an older Frontdesk filled up to the last number: a new scope is refused
    # rather than given ids an export could not carry
    db = Database(tmp_path / "frontdesk.db", migrations=MIGRATIONS)
    memory = Memory(db)
    db.writer.execute("INSERT INTO memory_scopes (scope, number) VALUES ('telegram:1', ?)",
                      (LAST_NUMBER,))
    with pytest.raises(OverflowError, match="no scope numbers left"):
        memory.add("telegram:2", "one scope too many")
    count = db.writer.execute("SELECT COUNT(*) FROM memory_notes").fetchone()[0]
    db.close()
    assert count == 0
