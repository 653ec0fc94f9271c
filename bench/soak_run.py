"""The soak's driver: `frontdesk run` answering many people on the fake Telegram, sampled.

``run_soak(config)`` starts the real bot as a subprocess (``python -m bot.cli.main run``, with
the offline model, made ``model_delay`` seconds slower per call when asked) polling a
``tests/fakes/telegram_server.py`` in a thread, and keeps ``in_flight`` people writing at once:
each waits for the answer to their message before their next one, as a person does. Every
``every`` messages it takes a ``Sample`` of the bot process at rest (the messages before it
answered first): RSS, open descriptors and threads (from ``/proc``), asyncio tasks
(``kill -USR1``: the bot logs them), the database's size on disk, and the answers' p50/p99
in that stretch. ``bench/soak.py`` prints them;
``tests/chaos/test_soak.py`` runs a short one and checks nothing grows.

The fake keeps every request it saw; the driver trims that history as it goes, so a run of
200,000 messages measures the bot, not the fake's lists.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.frontdesk_run import clean_env, percentile, stop
from tests.fakes.telegram_server import FakeTelegramServer

OWNER = 1  # sets the reminders (and gets the urgent notices); not timed
FIRST_GUEST = 1001
HOLDING = re.compile(r"holding: (\d+) asyncio tasks, (\d+) threads(?:, SQLite (\d+) KiB)?"
                     r"(?: \(most \d+\))?(?:, Python (\d+) blocks)?"
                     r"(?:, malloc (\d+) KiB in use, (\d+) KiB kept free)?")
TEXTS = ("hi there!", "what are your opening hours?", "good morning", "how much does a "
         "consultation cost?", "is the office open on saturday?", "thanks!",
         "can you tell me where you are located?", "hello again",
         "URGENT: the server room is flooding, please call me now",
         "do you take card payments?")
REMINDER = "remind me in 1 minute to stretch"
FIRED = "Reminder: stretch"  # what the bot writes when it fires
# the offline model, ``delay`` seconds slower per call: a stand-in for a provider's latency
SLOW_MODEL = """
import asyncio, sys
from bot.models import offline
delay = float(sys.argv[1])
plain = offline.OfflineModel.complete
async def complete(self, *args, **kwargs):
    await asyncio.sleep(delay)
    return await plain(self, *args, **kwargs)
offline.OfflineModel.complete = complete
from bot.cli.main import main
raise SystemExit(main(["run"]))
"""


@dataclass(frozen=True)
class SoakConfig:
    """What the soak sends, and how often it looks."""

    messages: int = 20_000
    people: int = 200
    every: int = 1_000  # a sample each this many answered messages
    in_flight: int = 20  # people waiting for an answer at any moment
    file_every: int = 100  # every this many messages one is a file
    reminder_every: int = 500  # the owner sets a reminder (due in a minute) this often
    restart_every: int = 5_000  # the fake Telegram restarts (0: never); halfway between samples
    keep_days: str | None = None  # FRONTDESK_KEEP_DAYS, when given
    model_delay: float = 0.0  # seconds each model call takes


@dataclass(frozen=True)
class Sample:
    """The bot process after ``messages`` answers."""

    messages: int
    seconds: float
    rss_kb: int
    heap_kb: int  # of the RSS, anonymous memory: what a leak grows (the rest: mapped files,
    fds: int      # among them the database the reader maps, counted as its pages are read)
    sockets: int  # of the descriptors: the HTTP pool's keep-alive connections come and go
    threads: int
    tasks: int | None  # None: the bot did not say in time
    db_bytes: int
    p50_ms: float
    p99_ms: float
    sqlite_kb: int | None = None  # of the heap, SQLite's (page caches, statements): None, unsaid
    python_blocks: int | None = None  # Python's live objects (sys.getallocatedblocks)
    malloc_kb: int | None = None  # the C allocator's bytes handed out...
    malloc_free_kb: int | None = None  # ...and those it keeps free (glibc only)


@dataclass
class SoakResult:
    samples: list[Sample] = field(default_factory=list)
    restarts_at: list[int] = field(default_factory=list)  # messages answered at each restart
    reminders_fired: int = 0
    log_tail: str = ""


def proc_status(pid: int) -> tuple[int, int, int, int, int]:
    """(RSS and of it anonymous memory in kB, open descriptors, of them sockets, threads) of
    a process, from /proc."""
    fields = dict(line.split(":", 1) for line in
                  Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    rss = int(fields["VmRSS"].split()[0])
    targets = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            targets.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            continue  # closed while it was listed
    sockets = sum(1 for target in targets if target.startswith("socket:"))
    heap = int(fields["RssAnon"].split()[0])
    return rss, heap, len(targets), sockets, int(fields["Threads"])


def db_bytes(home: Path) -> int:
    """The database's files on disk (the main file, its WAL and shared memory)."""
    return sum(path.stat().st_size for path in home.glob("frontdesk.db*"))


def holdings(pid: int, log: Path, timeout: float = 5.0) -> list[int | None]:
    """Ask the bot (SIGUSR1) what it holds: asyncio tasks, then KiB SQLite holds, Python's
    blocks, malloc's KiB in use and kept free; None for what it does not say."""
    before = len(HOLDING.findall(log.read_text(errors="replace")))
    os.kill(pid, signal.SIGUSR1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = HOLDING.findall(log.read_text(errors="replace"))
        if len(found) > before:
            tasks, _threads, *rest = found[-1]
            return [int(tasks), *(int(value) if value else None for value in rest)]
        time.sleep(0.02)  # a file, not the fake: nothing to wait on but the clock
    return [None] * 5


def start_bot(api: FakeTelegramServer, home: Path, config: SoakConfig,
              log: Path) -> subprocess.Popen[bytes]:
    """`frontdesk run` for the soak: streaming on, no guest cap, writes paced at 1,000 a
    second (far above what it sends; the pace keeps that many slot times, so a figure of
    100,000 would fill a table the size of 100,000 writes and look like a leak)."""
    guests = ",".join(str(FIRST_GUEST + n) for n in range(config.people - 1))
    env = clean_env() | {
        "TELEGRAM_BOT_TOKEN": api.token, "TELEGRAM_BASE_URL": api.base_url,
        "FRONTDESK_HOME": str(home), "TELEGRAM_OWNER_ID": str(OWNER),
        "TELEGRAM_ALLOWED_USERS": guests, "FRONTDESK_MODEL_PROVIDER": "offline",
        "FRONTDESK_STREAM": "on", "FRONTDESK_WRITES_PER_SECOND": "1000",
        "FRONTDESK_GUEST_MESSAGES_PER_HOUR": "0", "FRONTDESK_LOG_LEVEL": "INFO",
        "FRONTDESK_TIMEZONE": "UTC", "PYTHONUNBUFFERED": "1"}
    if config.keep_days is not None:
        env["FRONTDESK_KEEP_DAYS"] = config.keep_days
    command = [sys.executable, "-m", "bot.cli.main", "run"]
    if config.model_delay > 0:
        command = [sys.executable, "-c", SLOW_MODEL, str(config.model_delay)]
    repo = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [repo, env.get("PYTHONPATH", "")]))
    with log.open("ab") as out:
        return subprocess.Popen(command, env=env, cwd=home, stdout=out, stderr=out)


def push(api: FakeTelegramServer, number: int, person: int) -> int:
    """Queue message ``number`` of a guest (a file every so often); its message id."""
    if number % 100 == 99:
        update = api.push_document(person, person, f"order list {number}\n".encode() * 20,
                                   f"orders-{number}.txt", "text/plain",
                                   caption="what is in this file?")
    else:
        update = api.push_message(person, person, TEXTS[number % len(TEXTS)])
    return int(update["message"]["message_id"])


def answered(api: FakeTelegramServer, chat: int, after: int) -> bool:
    """Whether the bot has sent a (final) message in ``chat`` since message ``after``."""
    sent = api.sent.get(chat)
    return bool(sent) and sent[-1].message_id > after


def trim(api: FakeTelegramServer, keep: Callable[[int], bool]) -> None:
    """Forget the fake's history (its requests, drafts, old messages): only what the soak
    still waits on (``keep``: a chat) stays."""
    with api._lock:
        api.calls.clear()
        api.chat_actions.clear()
        api.drafts.clear()
        api.deleted.clear()
        for messages in api.sent.values():
            del messages[:-1]
        api._messages = {key: msg for key, msg in api._messages.items() if keep(key[0])}
        api.files = {}


def run_soak(config: SoakConfig, report: Callable[[Sample], None] = lambda sample: None,
             home: Path | None = None) -> SoakResult:
    """Send ``config.messages`` and sample the bot every ``config.every`` answers."""
    result = SoakResult()
    with tempfile.TemporaryDirectory() as scratch, FakeTelegramServer() as api:
        home = home or Path(scratch)
        log = home / "soak-bot.log"
        bot = start_bot(api, home, config, log)
        try:
            api.wait_for_sync(lambda: api.polls > 0 or bot.poll() is not None, timeout=120)
            _drive(api, bot, home, log, config, report, result)
        finally:
            stop(bot)
            result.log_tail = log.read_text(errors="replace")[-3000:]
    return result


def _drive(api: FakeTelegramServer, bot: subprocess.Popen[bytes], home: Path, log: Path,
           config: SoakConfig, report: Callable[[Sample], None], result: SoakResult) -> None:
    guests = [FIRST_GUEST + n for n in range(max(1, config.people - 1))]
    waiting: dict[int, tuple[int, float]] = {}  # chat -> (its message id, sent at)
    free = list(reversed(guests))
    owner_seen = 0
    sent = done = 0
    window: list[float] = []
    started = time.monotonic()
    boundary = min(config.every, config.messages)  # a sample is taken at rest, once all
    while done < config.messages:                  # messages before it are answered
        while sent < boundary and free and len(waiting) < config.in_flight:
            person = free.pop()
            waiting[person] = (push(api, sent, person), time.perf_counter())
            sent += 1
            if sent % config.reminder_every == 0:
                api.push_message(OWNER, OWNER, REMINDER)
        finished = api.wait_for_sync(lambda: [chat for chat, (after, _) in waiting.items()
                                              if answered(api, chat, after)]
                                     or (bot.poll() is not None and [-1]), timeout=300)
        if bot.poll() is not None:
            raise RuntimeError(f"the bot exited ({bot.returncode})")
        now = time.perf_counter()
        for chat in finished:
            window.append(now - waiting.pop(chat)[1])
            free.insert(0, chat)
            done += 1
            if config.restart_every and done % config.restart_every == config.every // 2:
                api.stop_thread()  # the platform drops the connection, and comes back
                api.start_in_thread()
                result.restarts_at.append(done)
            if done == boundary:
                boundary = min(boundary + config.every, config.messages)
                with api._lock:
                    owner_msgs = api.sent.get(OWNER, [])
                    result.reminders_fired += sum(1 for m in owner_msgs if m.message_id >
                                                  owner_seen and FIRED in m.text)
                    owner_seen = max([owner_seen, *(m.message_id for m in owner_msgs)])
                trim(api, lambda chat: chat in waiting)
                rss, heap, fds, sockets, threads = proc_status(bot.pid)
                tasks, *held = holdings(bot.pid, log)
                sample = Sample(done, round(time.monotonic() - started, 1), rss, heap, fds,
                                sockets, threads, tasks, db_bytes(home),
                                percentile(window, 0.5) * 1000, percentile(window, 0.99) * 1000,
                                *held)
                result.samples.append(sample)
                report(sample)
                window = []
