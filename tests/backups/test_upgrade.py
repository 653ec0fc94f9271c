"""Upgrades: a backup before the first pending migration, all of them or none, a newer
database refused by every command without a write, and `--version` saying where it stands."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from bot import schema
from bot.backups.archive import unpack_backup
from bot.cli.main import main
from bot.schema import known_migrations, ordered_migrations
from sqlitedb import Migration, applied_migrations, connect, migrate, running_version
from tests.backups.conftest import NEWER, clean_env, database_at, digest, frontdesk, make_newer

BROKEN: list[Migration] = [
    ("zz_001_fine", "CREATE TABLE zz_fine (x INTEGER)"),
    ("zz_002_broken", "CREATE TABLE zz_half (x INTEGER);\nINSERT INTO nowhere VALUES (1);"),
]


def dump(path: Path) -> list[str]:
    """The database's whole content as SQL, to compare 'as it was'."""
    conn = sqlite3.connect(path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def recorded(path: Path) -> dict[str, str | None]:
    conn = sqlite3.connect(path)
    try:
        return applied_migrations(conn)
    finally:
        conn.close()


def test_pending_migrations_are_applied_after_a_backup_said_in_one_line(
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    database = database_at(home, drop_last=2)
    older = set(recorded(database))
    done = frontdesk(home, "memory", "add", "after the upgrade")
    assert done.returncode == 0, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("frontdesk: backed up the database before applying 2 migrations: ")
    backup = Path(line.rsplit(": ", 1)[1])
    assert backup.parent == home / "backups" and "before-upgrade" in backup.name
    assert set(unpack_backup(backup, tmp_path / "out").migrations) == older
    applied = recorded(database)
    assert set(applied) == known_migrations()
    assert {applied[name] for name, _ in ordered_migrations()[-2:]} == {running_version()}
    again = frontdesk(home, "memory", "search", "upgrade")  # once: nothing left to apply
    assert again.returncode == 0 and again.stderr == "" and "after the [upgrade]" in again.stdout
    assert len(list((home / "backups").iterdir())) == 1


def test_a_fresh_home_gets_its_database_without_a_backup(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = frontdesk(home, "runs")
    assert done.returncode == 0 and done.stderr == ""
    assert set(recorded(home / "frontdesk.db")) == known_migrations()
    assert not (home / "backups").exists()


def test_a_failed_migration_leaves_the_database_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    database = database_at(home)
    before = dump(database)
    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, *BROKEN])
    for name, value in clean_env(home).items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    code = main(["memory", "search", "anything"])
    captured = capsys.readouterr()
    assert code == 1 and captured.out == "" and "Traceback" not in captured.err
    backed_up, failed = captured.err.splitlines()
    assert "before applying 2 migrations" in backed_up
    assert failed.startswith("frontdesk: the upgrade failed at migration zz_002_broken ")
    assert "nowhere" in failed and "the database is as it was" in failed
    assert "its backup: " + str(home / "backups") in failed
    assert dump(database) == before  # neither the fine one nor half of the broken one


def test_migrate_atomic_applies_all_or_none(tmp_path: Path) -> None:
    conn = connect(tmp_path / "db.sqlite")
    with pytest.raises(sqlite3.DatabaseError, match="zz_002_broken"):
        migrate(conn, BROKEN, atomic=True)
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert not tables & {"zz_fine", "zz_half"} and applied_migrations(conn) == {}
    assert migrate(conn, BROKEN[:1], atomic=True) == ["zz_001_fine"]
    assert applied_migrations(conn) == {"zz_001_fine": running_version()}


def test_a_migrations_table_from_before_versions_gets_its_column(tmp_path: Path) -> None:
    conn = connect(tmp_path / "db.sqlite")
    conn.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
    conn.execute("INSERT INTO migrations VALUES ('zz_001_fine', 0)")
    conn.execute("CREATE TABLE zz_fine (x INTEGER)")
    assert applied_migrations(conn) == {"zz_001_fine": None}
    assert migrate(conn, BROKEN[:1]) == []  # the old record counts
    assert migrate(conn, [("zz_003_more", "CREATE TABLE zz_more (x)")]) == ["zz_003_more"]
    assert applied_migrations(conn) == {"zz_001_fine": None, "zz_003_more": running_version()}


# Every command that opens the database; `run` stops before it starts anything.
COMMANDS = [("run",), ("chat", "hello"), ("memory", "search", "x"), ("memory", "add", "x"),
            ("runs",), ("reminders",), ("tools",), ("people",), ("backup",),
            ("graph", "triage"), ("dashboard", "--port", "0")]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_newer_database_stops_every_command_without_a_write(
        tmp_path: Path, command: tuple[str, ...]) -> None:
    home = tmp_path / "home"
    database = database_at(home)
    make_newer(database)
    before = digest(database)
    done = frontdesk(home, *command)
    assert done.returncode == 1 and done.stdout == "" and "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert f"written by Frontdesk {NEWER} (migration zz_from_the_future_001)" in line
    assert f"newer than this Frontdesk {running_version()}" in line
    assert digest(database) == before
    assert sorted(p.name for p in home.iterdir() if p.name != "logs") == ["frontdesk.db"]


def test_doctor_names_a_newer_database(tmp_path: Path) -> None:
    home = tmp_path / "home"
    database = database_at(home)
    make_newer(database)
    before = digest(database)
    done = frontdesk(home, "doctor")
    [line] = [line for line in done.stdout.splitlines() if " database " in line]
    assert line.startswith("FAIL") and f"written by Frontdesk {NEWER}" in line
    assert digest(database) == before


def version_line(home: Path) -> str:
    done = frontdesk(home, "--version")
    assert done.returncode == 0 and done.stderr == ""
    return done.stdout.strip()


def test_version_says_where_the_database_stands(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ours = f"frontdesk {running_version()}"
    count = len(known_migrations())
    assert version_line(home) == f"{ours} (database: no database yet)"
    database = database_at(home, drop_last=2)
    assert version_line(home) == f"{ours} (database: {count - 2} migrations, 2 to apply)"
    database_at(home)
    assert version_line(home) == f"{ours} (database: {count} migrations, up to date)"
    make_newer(database)
    assert version_line(home) == (f"{ours} (database: written by Frontdesk {NEWER}, newer "
                                  "than this one)")


def test_doctor_says_how_many_migrations_are_to_apply(tmp_path: Path) -> None:
    home = tmp_path / "home"
    database_at(home, drop_last=3)
    done = frontdesk(home, "doctor")
    [line] = [line for line in done.stdout.splitlines() if " database " in line]
    assert line.startswith("ok") and "3 to apply at the next start, after a backup" in line
