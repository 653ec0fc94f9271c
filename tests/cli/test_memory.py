"""`frontdesk memory add | search | forget` on the owner's notes in FRONTDESK_HOME."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from memory.notes import Memory
from memory.schema import MIGRATIONS
from sqlitedb.database import Database
from tests.support.child_process import clean_env


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = clean_env(FRONTDESK_HOME=str(tmp_path / "home"))
    return subprocess.run([sys.executable, "-m", "bot.cli.main", "memory", *args], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=60)


def test_add_search_forget(tmp_path: Path) -> None:
    added = cli(tmp_path, "add", "The boiler service is on 3 May")
    assert added.returncode == 0 and added.stdout.strip() == "saved note 1"
    found = cli(tmp_path, "search", "boiler")
    assert found.stdout.startswith("1\t") and "[boiler]" in found.stdout
    with Database(tmp_path / "home" / "frontdesk.db") as db:
        assert [h.text for h in Memory(db).recent("owner")] == ["The boiler service is on 3 May"]
    assert cli(tmp_path, "forget", "1").returncode == 0
    assert cli(tmp_path, "search", "boiler").stdout.strip() == "no notes match"
    missing = cli(tmp_path, "forget", "1")
    assert missing.returncode == 1 and "no note 1" in missing.stderr
    assert cli(tmp_path, "forget", "one").returncode == 2


def test_notes_of_other_people_are_not_the_owners(tmp_path: Path) -> None:
    with Database(tmp_path / "home" / "frontdesk.db", migrations=MIGRATIONS) as db:
        other = Memory(db).add("telegram:42", "boiler gossip")
    assert cli(tmp_path, "search", "boiler").stdout.strip() == "no notes match"
    assert cli(tmp_path, "forget", str(other)).returncode == 1


def test_too_large_is_refused_clearly(tmp_path: Path) -> None:
    done = cli(tmp_path, "add", "x" * 20_000)
    assert done.returncode == 1 and "limit" in done.stderr and "Traceback" not in done.stderr
