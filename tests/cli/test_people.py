"""`frontdesk people` lists the email correspondents beside the people pairing decided on."""

from __future__ import annotations

from pathlib import Path

from bot.config.settings import Settings
from bot.delivery.inbox import Inbox
from bot.schema import open_database
from tests.config.test_bad_settings import frontdesk


def test_email_correspondents_are_listed_latest_first(tmp_path: Path) -> None:
    settings = Settings.from_env({"FRONTDESK_HOME": str(tmp_path / "home")})
    settings.home.mkdir(parents=True)
    with open_database(settings.database) as db:
        inbox = Inbox(db)
        for number, (address, name) in enumerate([("ana@example.com", "Ana Lima"),
                                                  ("bo@example.org", "Bo\x1b[31m"),
                                                  ("ana@example.com", "Ana Lima")]):
            inbox.record("email", address, f"<m{number}@x>", address, {"user_name": name})
        inbox.record("telegram", "42", "1", "42", {"user_name": "Cy"})
    done = frontdesk(tmp_path, "people")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "Email correspondents" in done.stdout and "No one has asked yet" not in done.stdout
    mail = [line for line in lines if line.startswith("email")]
    assert [line.split()[1] for line in mail] == ["ana@example.com", "bo@example.org"]
    assert "2 mails" in mail[0] and "Ana Lima" in mail[0] and "1 mail " in mail[1]
    assert "\x1b" not in done.stdout  # the name they chose cannot drive the terminal
    assert "Cy" not in done.stdout  # a chat platform's senders are not correspondents


def test_people_come_a_page_at_a_time_newest_first(tmp_path: Path) -> None:
    settings = Settings.from_env({"FRONTDESK_HOME": str(tmp_path / "home")})
    settings.home.mkdir(parents=True)
    with open_database(settings.database) as db:
        db.writer.executemany(
            "INSERT INTO people (platform, user_id, status, name, asked_at) VALUES"
            " ('telegram', ?, 'allowed', ?, ?)",
            [(str(n), f"person {n}", 1_700_000_000.0 + n) for n in range(120)])
        db.writer.execute("INSERT INTO person_zones (scope, zone) VALUES"
                          " ('telegram:5', 'Asia/Tokyo'), ('telegram:999', 'Europe/Oslo')")
        Inbox(db).record("email", "ana@example.com", "<m@x>", "ana@example.com", {})
    seen: list[str] = []
    command = ["people"]
    pages = []
    while command:
        done = frontdesk(tmp_path, *command)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        pages.append(lines)
        seen += [line.split()[1] for line in lines if line.startswith("telegram ")]
        more = [line for line in lines if line.startswith("more: frontdesk people")]
        command = more[0].removeprefix("more: frontdesk ").split() if more else []
    assert seen == [str(n) for n in reversed(range(120))]  # each once, newest first
    assert [len([ln for ln in page if ln.startswith("telegram ")]) for page in pages] == [
        50, 50, 20]
    assert "time zone Asia/Tokyo" in next(ln for ln in pages[2] if ln.split()[1] == "5")
    # the settings' people and the mail correspondents come once, with the first page
    assert any(ln.startswith("telegram:999") for ln in pages[0])
    assert not any(ln.startswith("telegram:999") or ln.startswith("email")
                   for page in pages[1:] for ln in page)
    assert any(ln.startswith("email") for ln in pages[0])


def test_a_limit_below_one_is_named(tmp_path: Path) -> None:
    settings = Settings.from_env({"FRONTDESK_HOME": str(tmp_path / "home")})
    settings.home.mkdir(parents=True)
    open_database(settings.database).close()
    done = frontdesk(tmp_path, "people", "--limit", "0")
    assert done.returncode == 2 and "--limit 0" in done.stdout
    assert len(done.stdout.strip().splitlines()) == 1 and "Traceback" not in done.stderr
