"""Bench email: a mail's arrival to its reply with IMAP IDLE, CPU per mail, and 5 SIGKILLs.

Usage:
    .venv/bin/python bench/email.py                 # 50 mails timed, 50 mails with 5 kills
    .venv/bin/python bench/email.py --mails 20 --kills 2

A real Dovecot (Debian's dovecot-imapd) and aiosmtpd on loopback, as the tests run them
(``tests/support/mail_servers.py``); ``frontdesk run`` as a subprocess with email only and
the offline model (instant: the time is the desk's own).

1. **Latency**: after 3 warm-up mails, each mail is filed by IMAP APPEND and timed until its
   reply reaches the SMTP server (one at a time: IDLE's wake-up, the fetch, the record, the
   run, the reply by SMTP, all in it). CPU per mail: the bot process's user + system CPU time
   (``/proc/<pid>/stat``) over those mails, divided by their number.
2. **Kills**: mails are filed steadily while ``frontdesk run`` is SIGKILLed ``--kills`` times
   at spread moments and started again each time; then every mail must have been answered
   exactly once: counted per In-Reply-To at the SMTP server, where a resend after the server's
   accept is the same reply (the same Message-ID: docs/email.md's crash statement), so the
   distinct Message-IDs per mail must be one; the raw copies are reported too.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
import warnings
from collections import defaultdict
from pathlib import Path

# The repository instead of bench/, whose email.py would shadow the standard library's email.
sys.path.remove(str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.adapters.email.conftest import DeskProcess
from tests.support.mail_servers import (
    Dovecot,
    Smtp,
    dovecot_missing,
    email_env,
    mail,
)

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """A process's user + system CPU time so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def desk_env(dovecot: Dovecot, smtp: Smtp) -> dict[str, str]:
    return email_env(dovecot, smtp, FRONTDESK_EMAIL_ALLOWED="@example.com",
                     FRONTDESK_EMAIL_REPLIES_PER_DAY="10000")


def latency(root: Path, mails: int) -> None:
    with Dovecot(root / "imap") as dovecot, Smtp() as smtp:
        desk = DeskProcess(root / "home-latency", desk_env(dovecot, smtp))
        desk.start()
        try:
            for number in range(3):  # warm-up: the first run's imports, the first SMTP login
                dovecot.deliver(mail(f"warm{number}@example.com", "Warm", "Hello?",
                                     message_id=f"<warm{number}@example.com>"))
                smtp.wait_for(number + 1)
            assert desk.proc is not None
            pid = desk.proc.pid
            cpu_before = cpu_seconds(pid)
            took: list[float] = []
            for number in range(mails):
                sent = time.perf_counter()
                dovecot.deliver(mail(f"p{number}@example.com", f"Question {number}",
                                     "Are you free on Friday?",
                                     message_id=f"<lat{number}@example.com>"))
                smtp.wait_for(3 + number + 1, timeout=30)
                took.append((time.perf_counter() - sent) * 1000)
            cpu = cpu_seconds(pid) - cpu_before
        finally:
            desk.stop()
    print(f"latency, arrival (IMAP APPEND) to reply (at the SMTP server), IDLE, {mails} mails:")
    print(f"  p50 {statistics.median(took):.0f} ms   p99 {percentile(took, 0.99):.0f} ms   "
          f"max {max(took):.0f} ms")
    print(f"  CPU of the bot process: {cpu:.2f} s for {mails} mails = "
          f"{cpu / mails * 1000:.0f} ms per mail")


def kills(root: Path, mails: int, kill_count: int) -> None:
    with Dovecot(root / "imap-kills") as dovecot, Smtp() as smtp:
        desk = DeskProcess(root / "home-kills", desk_env(dovecot, smtp))
        desk.start()
        ids = [f"<kill{number}@example.com>" for number in range(mails)]
        filed = threading.Event()

        def file_all() -> None:
            for number, message_id in enumerate(ids):
                dovecot.deliver(mail(f"k{number}@example.com", f"Kill {number}",
                                     "Could you confirm?", message_id=message_id))
                time.sleep(0.1)  # a steady stream: the kills fall between and within mails
            filed.set()

        feeder = threading.Thread(target=file_all)
        feeder.start()
        started = time.monotonic()
        killed = 0
        try:
            while killed < kill_count:  # spread over the filing (about 0.1 s a mail)
                due = started + (killed + 1) * mails * 0.1 / (kill_count + 1)
                time.sleep(max(0.0, due - time.monotonic()))
                desk.kill()
                killed += 1
                desk.start()
            feeder.join()
            deadline = time.monotonic() + 120
            while {str(r["In-Reply-To"]) for r in smtp.received} < set(ids):
                if time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            # what a late duplicate would be has time to come
            desk.poll(lambda: all("\\Seen" in flag for flag in dovecot.flags().values()), 60)
        finally:
            desk.stop()
    replies: dict[str, list[str]] = defaultdict(list)
    for reply in smtp.received:
        replies[str(reply["In-Reply-To"])].append(str(reply["Message-ID"]))
    answered = [id_ for id_ in ids if id_ in replies]
    once = [id_ for id_ in answered if len(set(replies[id_])) == 1]
    copies = sum(len(replies[id_]) - 1 for id_ in answered)
    print(f"{kill_count} SIGKILLs of `frontdesk run` during {mails} mails:")
    print(f"  answered {len(answered)}/{mails}; exactly once (one Message-ID each) "
          f"{len(once)}/{mails}; same-Message-ID resends {copies}; "
          f"replies to anything else {len(set(replies) - set(ids))}")
    if len(once) != mails:
        raise SystemExit("FAILED: not every mail was answered exactly once")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mails", type=int, default=50)
    parser.add_argument("--kills", type=int, default=5)
    args = parser.parse_args()
    warnings.filterwarnings("ignore", "Session.login_data")  # aiosmtpd's own, per login
    if (reason := dovecot_missing()) is not None:
        raise SystemExit(reason)
    with tempfile.TemporaryDirectory(prefix="frontdesk-bench-email-") as folder:
        latency(Path(folder), args.mails)
        kills(Path(folder), args.mails, args.kills)


if __name__ == "__main__":
    main()
