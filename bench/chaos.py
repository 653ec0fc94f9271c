"""Chaos bench: SIGKILL `frontdesk run` at random moments; count each message's answers.

Usage:
    .venv/bin/python bench/chaos.py                      # 40 chats, 4 messages each, seed 1
    .venv/bin/python bench/chaos.py --seed 7 --kills 15
    .venv/bin/python bench/chaos.py --chats 10 --messages-per-chat 6 --window 20

Half the chats are on the fake Telegram Bot API, half on the fake Discord (REST and gateway),
all on 127.0.0.1 (``tests/fakes``, wrapped by ``bench/chaos_fakes.py``); each chat is an
allowlisted person in a private chat. One ``frontdesk run`` serves both, with the offline
model and a ``FRONTDESK_HOME`` in a temporary directory. After a warm-up "hello" in every
chat (so the bot knows each Discord DM channel before it is ever down), every chat sends its
messages at random moments of the window, alternating plain questions and
"remember that locker <tag> …" (each saves a note, the side effect). Meanwhile the bench
SIGKILLs the bot at random moments (seeded: 8–15 kills unless ``--kills``) and restarts it
after a random pause of up to a second, so messages also arrive while it is down. When the
window is over, the bot gets until a deadline to catch up.

Printed: for every message, how often it was answered (once, twice, 3+, never); the totals
per platform; and the duplicated side effects: note texts saved more than once, read from
the notes table of the bot's database; "late" counts messages first answered after a later
message of the same chat. Replies are matched to messages per chat: a "Saved to your notes:
locker <tag>" names its message; any other reply answers the first unanswered question
since the last note reply, else an earlier unanswered one (late), else repeats the latest.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

# The repository instead of bench/, whose telegram.py would shadow python-telegram-bot.
_BENCH = str(Path(__file__).resolve().parent)
if _BENCH in sys.path:
    sys.path.remove(_BENCH)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.chaos_fakes import BotProcess, ChaosWorld, Chat  # noqa: E402
from bench.chaos_report import (  # noqa: E402
    GREETING,
    ChaosConfig,
    ChaosResult,
    Sent,
    report,
    tally,
)
from memory.notes import Memory  # noqa: E402
from memory.schema import MIGRATIONS  # noqa: E402
from sqlitedb import database_path  # noqa: E402
from sqlitedb.database import Database  # noqa: E402

QUESTIONS = ("who has the key to room {tag}?", "where did I put the {tag} folder?",
             "did anyone ask about order {tag}?", "which shelf is box {tag} on?")
MAX_UNEXPECTED_EXITS = 5  # a bot that keeps dying by itself ends the run early
POLL_S = 0.1


def plan_messages(chats: Sequence[Chat], config: ChaosConfig, rng: random.Random) -> list[Sent]:
    """Each chat's messages at random moments, questions and notes alternating."""
    messages = []
    for number, chat in enumerate(chats):
        times = sorted(rng.uniform(0.0, config.window) for _ in range(config.messages_per_chat))
        first = rng.choice(("remember", "question"))
        other = {"remember": "question", "question": "remember"}
        for position, at in enumerate(times):
            tag = f"{chat.platform[0]}{number:02d}x{position}"
            kind = first if position % 2 == 0 else other[first]
            text = (f"remember that locker {tag} holds parcel {rng.randint(100, 999)}"
                    if kind == "remember" else rng.choice(QUESTIONS).format(tag=tag))
            messages.append(Sent(chat, position, kind, tag, text, at))
    return messages


def plan_kills(config: ChaosConfig, rng: random.Random) -> list[tuple[float, float]]:
    """(kill at, restart at): one random moment in each equal slot of the window."""
    count = config.kills if config.kills is not None else rng.randint(8, 15)
    slot = config.window / max(count, 1)
    plan = []
    for i in range(count):
        kill = i * slot + rng.uniform(0.0, slot * 0.8)
        plan.append((kill, kill + min(rng.uniform(0.0, 1.0), slot * 0.2)))
    return plan


def warm_up(world: ChaosWorld, bot: BotProcess, timeout: float = 30.0) -> None:
    """Start the bot; once it is connected every chat says hello until it is greeted.

    Discord does not tell a bot about DM channels, so a first DM sent while the bot is down
    would never be read back: the warm-up makes every channel known before any kill."""
    bot.start()
    deadline = time.monotonic() + timeout
    world.telegram.wait_for_sync(lambda: world.telegram.polls > 0 or not bot.alive(), timeout)
    world.discord.wait_for_blocking(lambda: world.discord.identifies or not bot.alive(),
                                    timeout=timeout, what="the bot's IDENTIFY")
    said: dict[str, float] = {}
    while waiting := [c for c in world.chats
                      if not any(r.startswith(GREETING) for r in c.replies())]:
        if time.monotonic() > deadline or not bot.alive():
            raise RuntimeError(f"the warm-up was not answered; bot log:\n{bot.log_tail()}")
        for chat in waiting:
            if time.monotonic() - said.get(chat.name, -10.0) > 5.0:
                chat.send("hello")
                said[chat.name] = time.monotonic()
        time.sleep(POLL_S)


def read_notes(home: Path) -> Counter[str]:
    """Every note text in the bot's database, with how many rows hold it."""
    with Database(database_path(home), migrations=MIGRATIONS) as db:
        rows = Memory(db).conn.execute("SELECT text FROM memory_notes").fetchall()
    return Counter(str(text) for (text,) in rows)


def run_chaos(config: ChaosConfig, home: Path) -> ChaosResult:
    """The whole experiment over ``home``; returns when done or past its deadlines."""
    rng = random.Random(config.seed)
    began = time.monotonic()
    telegram_chats = (config.chats + 1) // 2
    with ChaosWorld(home, telegram_chats=telegram_chats,
                    discord_chats=config.chats - telegram_chats) as world:
        bot = world.bot
        assert bot is not None
        warm_up(world, bot)
        messages = plan_messages(world.chats, config, rng)
        kills = plan_kills(config, rng)
        exits: list[int | None] = []
        events = sorted([(m.at, 1, m) for m in messages]
                        + [(kill, 0, "kill") for kill, _ in kills]
                        + [(restart, 2, "start") for _, restart in kills],
                        key=lambda event: (event[0], event[1]))
        start = time.monotonic()

        def keep_running() -> None:
            """Restart a bot that ended by itself (not killed by us): counted, bounded."""
            if bot.proc is not None and not bot.alive() and len(exits) < MAX_UNEXPECTED_EXITS:
                exits.append(bot.proc.returncode)
                bot.start()

        down = False
        for at, _, action in events:
            while (wait := start + at - time.monotonic()) > 0:
                time.sleep(min(wait, POLL_S))
                if not down:
                    keep_running()
            if isinstance(action, Sent):
                action.chat.send(action.text)
            elif action == "kill":
                bot.kill()
                down = True
            else:
                bot.start()
                down = False
        window_end = time.monotonic()
        caught_up = settle_until(world, messages, keep_running, config, window_end)
        bot.stop()
        unmatched = tally(messages, world.chats)
        log_tail = bot.log_tail()
        replies = {chat.name: chat.replies() for chat in world.chats}
        starts = bot.starts
    return ChaosResult(config, messages, kills, starts, exits, unmatched, read_notes(home),
                       caught_up, time.monotonic() - began, log_tail, replies)


def settle_until(world: ChaosWorld, messages: list[Sent], keep_running: Callable[[], None],
                 config: ChaosConfig, window_end: float) -> float | None:
    """Poll until every message is answered and no reply came for ``settle`` seconds, or
    the catch-up deadline; seconds from the window's end until all were answered."""
    deadline = window_end + config.catch_up
    caught_up: float | None = None
    replies, quiet_since = -1, time.monotonic()
    while time.monotonic() < deadline:
        keep_running()
        tally(messages, world.chats)
        count = sum(len(chat.replies()) for chat in world.chats)
        if count != replies:
            replies, quiet_since = count, time.monotonic()
        if caught_up is None and all(m.answers for m in messages):
            caught_up = time.monotonic() - window_end
        if caught_up is not None and time.monotonic() - quiet_since >= config.settle:
            break
        time.sleep(POLL_S)
    return caught_up


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the flags, run once in a temporary home, print the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--chats", type=int, default=40)
    parser.add_argument("--kills", type=int, default=None, help="default: seeded 8-15")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--messages-per-chat", type=int, default=4)
    parser.add_argument("--window", type=float, default=45.0, help="seconds of sending")
    parser.add_argument("--catch-up", type=float, default=60.0, help="seconds after it")
    parser.add_argument("--quiet", action="store_true", help="totals only, not every message")
    args = parser.parse_args(argv)
    config = ChaosConfig(chats=args.chats, messages_per_chat=args.messages_per_chat,
                         kills=args.kills, seed=args.seed, window=args.window,
                         catch_up=args.catch_up)
    with tempfile.TemporaryDirectory(prefix="frontdesk-chaos-") as home:
        result = run_chaos(config, Path(home))
    print(report(result, every_message=not args.quiet))
    if result.unexpected_exits:
        print(f"bot log (tail):\n{result.log_tail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
