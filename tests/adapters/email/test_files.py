"""A mail's files through the media pipeline, and a mail too large to download, each through a
real Dovecot and a real SMTP server."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable

from bot.adapters.email.reading import read_mail
from tests.adapters.email.conftest import DeskProcess
from tests.support.files import pdf_with_text
from tests.support.mail_servers import Dovecot, Smtp, mail

ANA = "Ana Lima <ana@example.com>"


def frontdesk(desk: DeskProcess, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "bot.cli.main", *args], env=desk.env,
                          cwd=desk.home, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_pdf_in_a_mail_is_read_by_the_media_pipeline(
        dovecot: Dovecot, smtp: Smtp, desk_process: Callable[..., DeskProcess]) -> None:
    lease = mail(ANA, "The lease", "Here is the lease.", message_id="<lease@example.com>")
    lease.add_attachment(pdf_with_text(["Lease (signed)", "Rent: 900 EUR a month"]),
                         maintype="application", subtype="pdf", filename="lease.pdf")
    assert read_mail(lease, 1_000_000).attachments  # the mail carries its file
    desk = desk_process()
    desk.start()
    dovecot.deliver(lease)
    [reply] = smtp.wait_for(1)
    assert reply["In-Reply-To"] == "<lease@example.com>"
    desk.poll(lambda: "\\Seen" in dovecot.flags().get("<lease@example.com>", ""))
    run_id = frontdesk(desk, "runs").split()[0]
    shown = frontdesk(desk, "runs", run_id)
    assert '"platform": "email"' in shown and '"chat_id": "ana@example.com"' in shown
    assert "Document lease.pdf (pdf, 2 pages)" in shown and "Rent: 900 EUR" in shown
    home = desk.home / "attachments"
    assert not home.exists() or not os.listdir(home)  # answered: its files let go


def test_a_mail_over_the_file_cap_is_not_downloaded_and_its_sender_told_once(
        dovecot: Dovecot, smtp: Smtp, desk_process: Callable[..., DeskProcess]) -> None:
    big = mail(ANA, "The scans", "All the scans attached.", message_id="<scans@example.com>")
    big.add_attachment(os.urandom(200_000), maintype="application", subtype="octet-stream",
                       filename="scans.zip")
    desk = desk_process(FRONTDESK_MAX_FILE_MB="0.1")
    desk.start()
    dovecot.deliver(big)
    [notice] = smtp.wait_for(1)
    assert notice["In-Reply-To"] == "<scans@example.com>"
    text = notice.get_body().get_content()
    assert "too large" in text and "0.1 MB" in text
    assert text.count(".") <= 2  # one sentence (and the figure's point)
    desk.poll(lambda: "\\Seen" in dovecot.flags().get("<scans@example.com>", ""))
    assert "No runs yet." in frontdesk(desk, "runs")  # never read: no run, no model call
    dovecot.deliver(mail(ANA, "Small", "And a short question?", message_id="<small@example.com>"))
    smtp.wait_for(2)
    desk.poll(lambda: "ana@example.com" in frontdesk(desk, "people"))
    listed = frontdesk(desk, "people")
    assert "Email correspondents" in listed
    [line] = [line for line in listed.splitlines() if "ana@example.com" in line]
    assert line.startswith("email") and "1 mail " in line and "Ana Lima" in line
    desk.stop()
    desk.start()  # a restart does not tell the sender again
    dovecot.deliver(mail(ANA, "Later", "One more.", message_id="<later@example.com>"))
    smtp.wait_for(3)
    assert [str(r["In-Reply-To"]) for r in smtp.received] == [
        "<scans@example.com>", "<small@example.com>", "<later@example.com>"]
