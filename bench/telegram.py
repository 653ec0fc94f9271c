"""Bench Telegram latency: update to reply through `frontdesk run` vs a bare PTB echo bot.

Usage:
    .venv/bin/python bench/telegram.py              # 200 messages each, after 20 warm-up
    .venv/bin/python bench/telegram.py --messages 50

Both bots run as subprocesses, each polling its own instance of the fake Bot API
(``tests/fakes/telegram_server.py``) on loopback; messages alternate between the two, so a
noisy machine slows both alike. Latency is from queuing the update in the fake to the reply
arriving at it. Frontdesk answers through its whole path (inbox, triage graph with the
offline model, which is instant: the quick-reply route, outbox); the reference is the
python-telegram-bot echo bot from its own examples. Target: ≤ +10 ms at p50.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The repository instead of bench/, whose telegram.py would shadow python-telegram-bot.
sys.path.remove(str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fakes.telegram_server import FakeTelegramServer

CHATS = list(range(9001, 9021))
TARGET_MS = 10.0
ECHO_BOT = """
import logging, sys
from telegram import Update
from telegram.ext import Application, ContextTypes, MessageHandler, filters

async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    await update.message.reply_text(update.message.text)

logging.basicConfig(level=logging.WARNING)
app = Application.builder().token(sys.argv[1]).base_url(sys.argv[2]).build()
app.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, echo))
app.run_polling(allowed_updates=Update.ALL_TYPES)
"""


def clean_env() -> dict[str, str]:
    foreign = ("FRONTDESK_", "TELEGRAM_", "DISCORD_", "OPENAI_", "ANTHROPIC_")
    return {k: v for k, v in os.environ.items() if not k.startswith(foreign)}


def start_frontdesk(server: FakeTelegramServer, home: Path) -> subprocess.Popen[bytes]:
    env = clean_env() | {
        "TELEGRAM_BOT_TOKEN": server.token, "TELEGRAM_BASE_URL": server.base_url,
        "TELEGRAM_OWNER_ID": "1", "TELEGRAM_ALLOWED_USERS": ",".join(map(str, CHATS)),
        "FRONTDESK_HOME": str(home), "FRONTDESK_MODEL_PROVIDER": "offline",
        # the path's own latency: merging's deliberate wait for more lines is bench/burst.py's
        "FRONTDESK_MERGE_WINDOW": "0"}
    return subprocess.Popen([sys.executable, "-m", "bot.cli.main", "run"], env=env, cwd=home,
                            stdout=subprocess.DEVNULL)


def start_echo(server: FakeTelegramServer) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", ECHO_BOT, server.token, server.base_url],
                            env=clean_env(), stdout=subprocess.DEVNULL)


def round_trip(server: FakeTelegramServer, chat: int, text: str) -> float:
    """Seconds from queuing one message to the bot's reply in that chat."""
    before = len(server.messages_to(chat))
    started = time.perf_counter()
    server.push_message(chat, chat, text)
    server.wait_for_sync(lambda: len(server.messages_to(chat)) > before, timeout=30)
    return time.perf_counter() - started


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    with (FakeTelegramServer() as echo_api, FakeTelegramServer() as frontdesk_api,
          tempfile.TemporaryDirectory() as home):
        bots = [start_echo(echo_api), start_frontdesk(frontdesk_api, Path(home))]
        try:
            for api in (echo_api, frontdesk_api):
                api.wait_for_sync(lambda api=api: api.polls > 0, timeout=60)
            times: dict[str, list[float]] = {"echo": [], "frontdesk": []}
            for n in range(args.warmup + args.messages):
                chat = CHATS[n % len(CHATS)]
                echo_s = round_trip(echo_api, chat, "hi")
                frontdesk_s = round_trip(frontdesk_api, chat, "hi")
                if n >= args.warmup:
                    times["echo"].append(echo_s)
                    times["frontdesk"].append(frontdesk_s)
        finally:
            for bot in bots:
                bot.terminate()
                bot.wait(10)
    p50 = {name: statistics.median(values) * 1000 for name, values in times.items()}
    for name, values in times.items():
        print(f"{name:>10}: p50 {p50[name]:6.2f} ms  p90 {percentile(values, 0.9) * 1000:6.2f} ms"
              f"  ({len(values)} messages)")
    extra = p50["frontdesk"] - p50["echo"]
    verdict = "meets" if extra <= TARGET_MS else "MISSES"
    print(f"frontdesk over the bare echo bot at p50: {extra:+.2f} ms "
          f"({p50['frontdesk'] / p50['echo']:.2f}x); {verdict} the target of +{TARGET_MS:g} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
