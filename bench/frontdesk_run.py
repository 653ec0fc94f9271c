"""`frontdesk run` for a bench: a bot process on a loopback Telegram fake, and its round trips.

The benches that measure Frontdesk through its whole path (``bench/telegram.py``,
``bench/triage_tax.py``) start it the same way: a `frontdesk run` subprocess with a clean
environment (no ``FRONTDESK_``, ``TELEGRAM_``, model variables of the shell leak in), polling
its own instance of ``tests/fakes/telegram_server.py``, with the defaults (merging on: a lone
line is not held, so a round trip measures the path as a person meets it). A bench passes what
else it needs (owner, allowed users, model settings).

A bench script imports this as ``bench.frontdesk_run`` with the repository first on
``sys.path`` (and ``bench/`` off it, whose ``telegram.py`` would shadow python-telegram-bot).

Usage::

    bot = start_frontdesk(api, home, {"TELEGRAM_OWNER_ID": "1"})
    api.wait_for_sync(lambda: api.polls > 0, timeout=60)
    seconds = round_trip(api, 1, "hi")
    stop(bot)
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

# clean_env: imported from here by bench/telegram.py and bench/soak_run.py
from tests.support.child_process import clean_env as clean_env

if TYPE_CHECKING:  # only named, in annotations: the benches import the fake themselves
    from tests.fakes.telegram_server import FakeTelegramServer


def start_frontdesk(api: FakeTelegramServer, home: Path,
                    settings: Mapping[str, str]) -> subprocess.Popen[bytes]:
    """`frontdesk run` in ``home``, polling ``api``, with the defaults and ``settings``."""
    env = clean_env() | {
        "TELEGRAM_BOT_TOKEN": api.token, "TELEGRAM_BASE_URL": api.base_url,
        "FRONTDESK_HOME": str(home), **settings}
    return subprocess.Popen([sys.executable, "-m", "bot.cli.main", "run"], env=env, cwd=home,
                            stdout=subprocess.DEVNULL)


def stop(*bots: subprocess.Popen[bytes]) -> None:
    """Stop the bots (SIGTERM: each finishes its sends) and wait for them."""
    for bot in bots:
        bot.terminate()
    for bot in bots:
        bot.wait(10)


def round_trip(api: FakeTelegramServer, chat: int, text: str, *, sender: int | None = None,
               timeout: float = 60) -> float:
    """Seconds from queuing one message in ``chat`` to the bot's (first) reply there."""
    before = len(api.messages_to(chat))
    started = time.perf_counter()
    api.push_message(chat, chat if sender is None else sender, text)
    api.wait_for_sync(lambda: len(api.messages_to(chat)) > before, timeout=timeout)
    return time.perf_counter() - started


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values``, as the nearest value at or above it."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]
