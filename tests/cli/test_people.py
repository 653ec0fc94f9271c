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
