"""`frontdesk memory export` / `import` through the real CLI, between real homes."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from memory.notes import Memory
from memory.schema import MIGRATIONS
from memory.scopes import STRIDE
from sqlitedb.database import Database
from tests.support.child_process import clean_env

Note = tuple[int, str, str, float]  # id, scope, text, created_at

# a small export written by hand: the header, then three owner's notes
GOOD = ['{"format": "frontdesk-notes", "version": 1, "exported_at": 1.0, "notes": 3}',
        '{"id": 1, "scope": "owner", "text": "first", "created_at": 1700000000.5}',
        '{"id": 2, "scope": "owner", "text": "second", "created_at": 1700000001.5}',
        '{"id": 3, "scope": "owner", "text": "third", "created_at": 1700000002.5}']


def frontdesk(home: Path, *args: str, stdin: str | None = None, timeout: float = 120,
              ) -> subprocess.CompletedProcess[str]:
    """``frontdesk memory ARGS`` on ``home``, as a user would run it."""
    env = clean_env(FRONTDESK_HOME=str(home))
    return subprocess.run([sys.executable, "-m", "bot.cli.main", "memory", *args],
                          cwd=home.parent, env=env, input=stdin, capture_output=True,
                          text=True, timeout=timeout)


def notes(home: Path) -> list[Note]:
    """Every note in ``home``'s database, by id."""
    db = Database(home / "frontdesk.db", migrations=MIGRATIONS)
    conn = db.writer
    Memory(db)
    rows = conn.execute("SELECT id, scope, text, created_at FROM memory_notes ORDER BY id")
    found = [(int(i), str(s), str(t), float(c)) for i, s, t, c in rows]
    db.close()
    return found


def by_scope(found: list[Note]) -> dict[str, list[tuple[str, float]]]:
    """Each scope's notes as (text, created_at), oldest first: what must survive a move."""
    scopes: dict[str, list[tuple[str, float]]] = {}
    for _, scope, text, created_at in sorted(found, key=lambda note: (note[3], note[0])):
        scopes.setdefault(scope, []).append((text, created_at))
    return scopes


@pytest.fixture
def old_home(tmp_path: Path) -> Path:
    """A home with the owner's notes (one forgotten), a person's and a group chat's."""
    home = tmp_path / "old"
    db = Database(home / "frontdesk.db", migrations=MIGRATIONS)
    memory = Memory(db)
    memory.add("owner", "The boiler service is on 3 May")
    forgotten = memory.add("owner", "an old note, forgotten")
    memory.add("owner", "Café Zürich: the table by the window")
    memory.add("telegram:42", "Anna prefers mornings")
    memory.add("telegram:chat:-100", "team lunch on Friday")
    memory.add("owner", 'quotes " and \\ and a\nsecond line')
    memory.forget("owner", forgotten)
    db.close()
    return home


def export(home: Path, *args: str) -> str:
    done = frontdesk(home, "export", *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_move_to_a_fresh_home_keeps_every_note_its_scope_id_and_time(
        old_home: Path, tmp_path: Path) -> None:
    exported = tmp_path / "notes.jsonl"
    exported.write_text(export(old_home), encoding="utf-8")
    lines = exported.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    assert header["format"] == "frontdesk-notes" and header["version"] == 1
    assert header["notes"] == 5 == len(lines) - 1

    new_home = tmp_path / "new"
    done = frontdesk(new_home, "import", str(exported))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "imported 5 notes (0 with new ids), 0 already there"
    assert notes(new_home) == notes(old_home)  # ids, scopes, texts and times, exactly
    assert {note[1] for note in notes(new_home)} == {"owner", "telegram:42",
                                                     "telegram:chat:-100"}

    # the search index holds them: the owner's through the CLI, a guest's in their scope only
    found = frontdesk(new_home, "search", "cafe zurich")
    assert found.stdout.startswith("3\t") and "[Café]" in found.stdout
    db = Database(new_home / "frontdesk.db", migrations=MIGRATIONS)
    memory = Memory(db)
    assert [hit.text for hit in memory.search("telegram:42", "mornings")] == [
        "Anna prefers mornings"]
    assert memory.search("owner", "mornings") == []
    # a note written after the move takes the next id, not one an imported note holds
    assert memory.add("owner", "after the move") == 5
    assert memory.add("telegram:42", "after the move too") == STRIDE + 2
    db.close()


def test_ids_already_taken_are_mapped_to_new_ones_in_the_right_scope(
        old_home: Path, tmp_path: Path) -> None:
    exported = tmp_path / "notes.jsonl"
    exported.write_text(export(old_home), encoding="utf-8")
    new_home = tmp_path / "new"
    db = Database(new_home / "frontdesk.db", migrations=MIGRATIONS)
    memory = Memory(db)
    assert memory.add("owner", "already here: the car is blue") == 1  # takes note 1's id
    memory.add("discord:7", "takes the number telegram:42 had")
    db.close()

    done = frontdesk(new_home, "import", str(exported))
    assert done.returncode == 0, done.stderr
    # owner note 1 and telegram:42's one note get new ids; the rest keep theirs
    assert done.stdout.strip() == "imported 5 notes (2 with new ids), 0 already there"
    after = notes(new_home)
    assert len({note[0] for note in after}) == len(after) == 7
    moved = {text: note_id for note_id, _, text, _ in after}
    assert moved["Café Zürich: the table by the window"] == 3
    assert moved["The boiler service is on 3 May"] not in (1, 3)
    assert by_scope(after)["telegram:42"] == by_scope(notes(old_home))["telegram:42"]
    assert moved["Anna prefers mornings"] // STRIDE not in (0, 1, 2)  # a range of its own
    assert moved["team lunch on Friday"] == 2 * STRIDE + 1  # its number was free: kept

    found = frontdesk(new_home, "search", "boiler")
    assert found.stdout.startswith(f"{moved['The boiler service is on 3 May']}\t")
    db = Database(new_home / "frontdesk.db", migrations=MIGRATIONS)
    memory = Memory(db)
    assert [h.text for h in memory.search("telegram:42", "mornings")] == [
        "Anna prefers mornings"]
    assert memory.search("discord:7", "mornings") == []
    db.close()


def test_importing_the_same_notes_twice_adds_them_once(old_home: Path, tmp_path: Path) -> None:
    lines = tmp_path / "notes.jsonl"
    lines.write_text(export(old_home), encoding="utf-8")
    array = tmp_path / "notes.json"
    array.write_text(export(old_home, "--json"), encoding="utf-8")
    new_home = tmp_path / "new"
    assert frontdesk(new_home, "import", str(lines)).returncode == 0
    for again in (lines, array):
        done = frontdesk(new_home, "import", str(again))
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "imported 0 notes (0 with new ids), 5 already there"
    assert notes(new_home) == notes(old_home)
    # a note twice in one file is added once
    doubled = tmp_path / "doubled.jsonl"
    doubled.write_text("\n".join([*GOOD, GOOD[2]]).replace('"notes": 3', '"notes": 4'),
                       encoding="utf-8")
    done = frontdesk(tmp_path / "third", "import", str(doubled))
    assert done.stdout.strip() == "imported 3 notes (0 with new ids), 1 already there"
    assert [note[2] for note in notes(tmp_path / "third")] == ["first", "second", "third"]
    # back into the home it came from: everything is already there
    done = frontdesk(old_home, "import", str(array))
    assert done.stdout.strip() == "imported 0 notes (0 with new ids), 5 already there"


def test_the_json_array_and_stdin_are_read_too(old_home: Path, tmp_path: Path) -> None:
    array = export(old_home, "--json")
    items = json.loads(array)
    assert items[0]["format"] == "frontdesk-notes"
    assert [item["id"] for item in items[1:]] == [note[0] for note in notes(old_home)]
    assert [json.loads(line) for line in export(old_home).splitlines()][1:] == items[1:]

    from_stdin = tmp_path / "piped"
    done = frontdesk(from_stdin, "import", "-", stdin=array)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "imported 5 notes (0 with new ids), 0 already there"
    assert notes(from_stdin) == notes(old_home)


@pytest.mark.parametrize(("lines", "said"), [
    ([*GOOD[:3], '{"id": 3, "scope": "owner", "text": "third", "created_at": '],
     "line 4: not JSON"),
    ([*GOOD[:2], '{"id": 2, "text": "no scope", "created_at": 1.0}', *GOOD[3:]],
     'line 3: "scope" must be'),
    ([*GOOD[:3], '{"id": "3", "scope": "owner", "text": "t", "created_at": 1.0}'],
     'line 4: "id" must be'),
    ([*GOOD[:3], '{"id": 1152921504606846976, "scope": "owner", "text": "t", '
                 '"created_at": 1.0}'], 'line 4: "id" must be a whole number from 1 to'),
    ([*GOOD[:3], '{"id": 3, "scope": "owner", "text": "t", "created_at": "today"}'],
     'line 4: "created_at" must be'),
    ([*GOOD[:3], json.dumps({"id": 3, "scope": "owner", "text": "x" * 20_000,
                             "created_at": 1.0})], "line 4: this note is 20,000 characters"),
    ([*GOOD[:3], "[1, 2]"], "line 4: a note is a JSON object"),
    (GOOD[:3], "the file holds 2 notes but its first line says 3"),
    (GOOD[1:], "line 1: not a Frontdesk notes export"),
    ([GOOD[0].replace('"version": 1', '"version": 2'), *GOOD[1:]],
     "line 1: this export is format version 2; this Frontdesk reads version 1"),
    ([], "line 1: not a Frontdesk notes export"),
    (["[", GOOD[0] + ",", GOOD[1] + ",", '{"id": 2,}', "]"], "line 4: not JSON"),
    (["[", GOOD[0] + ",", GOOD[1] + ",", '{"id": 2}', "]"], 'item 3 of the array: "scope"'),
])
def test_a_bad_file_is_refused_naming_the_line_and_nothing_is_written(
        tmp_path: Path, lines: list[str], said: str) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    home = tmp_path / "home"
    assert frontdesk(home, "add", "a note of this home").returncode == 0
    before = notes(home)
    done = frontdesk(home, "import", str(bad))
    assert done.returncode == 1
    assert said in done.stderr and "Nothing was imported." in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert done.stdout == ""
    assert notes(home) == before
    assert frontdesk(home, "search", "first").stdout.strip() == "no notes match"


def test_bytes_that_are_not_text_and_a_missing_file_are_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(("\n".join(GOOD[:2]) + "\n").encode() + b'{"id": 2, "text": "\xff"}\n')
    home = tmp_path / "home"
    done = frontdesk(home, "import", str(bad))
    assert done.returncode == 1 and "line 3: not UTF-8 text" in done.stderr, done.stderr
    assert notes(home) == []
    missing = frontdesk(home, "import", str(tmp_path / "nowhere.jsonl"))
    assert missing.returncode == 1 and "cannot read" in missing.stderr
    assert "Traceback" not in missing.stderr


# Run from a small parent: a child forked from this (large) test process would count the
# test's own memory in its peak, which Linux keeps across exec.
MEASURE = """
import resource, subprocess, sys
with open(sys.argv[1], "w") as sink:
    subprocess.run(sys.argv[2:], stdout=sink, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def peak_memory_of_export(home: Path, out: Path) -> int:
    """Run ``frontdesk memory export`` on ``home`` into ``out``; its peak resident set (KiB)."""
    env = clean_env(FRONTDESK_HOME=str(home))
    done = subprocess.run([sys.executable, "-c", MEASURE, str(out), sys.executable, "-m",
                           "bot.cli.main", "memory", "export"], cwd=home.parent, env=env,
                          capture_output=True, text=True, timeout=120, check=True)
    return int(done.stdout)


@pytest.mark.timeout(360)  # 10,000 long notes indexed twice (built, then imported)
def test_a_large_export_streams_and_comes_back_whole(tmp_path: Path) -> None:
    home = tmp_path / "big"
    db = Database(home / "frontdesk.db", migrations=MIGRATIONS)
    conn = db.writer
    # long words, few per note: the text is large (what the export must not hold) while the
    # words to index stay few (indexing, not exporting, is what would take the time)
    words = [f"longword{i:06d}" + "x" * 49 for i in range(2000)]  # 64 characters each
    pick = random.Random(7)
    texts = [" ".join(pick.choice(words) for _ in range(25)) for _ in range(10_000)]
    texts[2_345] += " zanzibar"
    Memory(db).add_many("owner", texts)
    db.close()
    texts_size = sum(map(len, texts))
    assert texts_size > 15_000_000

    big = tmp_path / "big.jsonl"
    empty = tmp_path / "empty.jsonl"
    peak_big = peak_memory_of_export(home, big)
    peak_empty = peak_memory_of_export(tmp_path / "empty", empty)
    # holding the notes (or the output) in memory would add at least their text, > 15 MB
    assert (peak_big - peak_empty) * 1024 < texts_size / 4, (peak_big, peak_empty)

    with big.open(encoding="utf-8") as lines:
        assert json.loads(next(lines))["notes"] == 10_000
        ids = [json.loads(line)["id"] for line in lines]
    assert ids == list(range(1, 10_001))

    moved = tmp_path / "moved"
    done = frontdesk(moved, "import", str(big), timeout=300)
    assert done.stdout.strip() == "imported 10,000 notes (0 with new ids), 0 already there"
    db = Database(moved / "frontdesk.db", migrations=MIGRATIONS)
    conn = db.writer
    memory = Memory(db)
    assert conn.execute("SELECT COUNT(*) FROM memory_notes").fetchone()[0] == 10_000
    assert [hit.text for hit in memory.recent("owner", 1)] == [texts[-1]]
    assert [hit.id for hit in memory.search("owner", "zanzibar")] == [2_345 + 1]
    db.close()
