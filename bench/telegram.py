"""Bench Telegram latency: update to reply through `frontdesk run` vs a bare PTB echo bot.

Usage:
    .venv/bin/python bench/telegram.py              # 200 messages each, after 20 warm-up
    .venv/bin/python bench/telegram.py --messages 50

Both bots run as subprocesses, each polling its own instance of the fake Bot API
(``tests/fakes/telegram_server.py``) on loopback (Frontdesk started by
``bench/frontdesk_run.py``, merging off); messages alternate between the two, so a
noisy machine slows both alike. Latency is from queuing the update in the fake to the reply
arriving at it. Frontdesk answers through its whole path (inbox, triage graph with the
offline model, which is instant: the quick-reply route, outbox); the reference is the
python-telegram-bot echo bot from its own examples. Target: ≤ +10 ms at p50.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

# The repository instead of bench/, whose telegram.py would shadow python-telegram-bot.
sys.path.remove(str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.frontdesk_run import clean_env, percentile, round_trip, start_frontdesk, stop
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


def start_echo(server: FakeTelegramServer) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", ECHO_BOT, server.token, server.base_url],
                            env=clean_env(), stdout=subprocess.DEVNULL)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    with (FakeTelegramServer() as echo_api, FakeTelegramServer() as frontdesk_api,
          tempfile.TemporaryDirectory() as home):
        bots = [start_echo(echo_api), start_frontdesk(frontdesk_api, Path(home), {
            "TELEGRAM_OWNER_ID": "1", "TELEGRAM_ALLOWED_USERS": ",".join(map(str, CHATS)),
            "FRONTDESK_MODEL_PROVIDER": "offline",
            # the round trip is measured, not the guests' hourly cap
            "FRONTDESK_GUEST_MESSAGES_PER_HOUR": "0"})]
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
            stop(*bots)
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
