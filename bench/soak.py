"""Soak bench: does `frontdesk run` stay flat over many messages? (issue 38)

Usage:
    .venv/bin/python bench/soak.py                          # 20,000 messages from 200 people
    .venv/bin/python bench/soak.py --messages 200000        # the long one (not in make test)
    .venv/bin/python bench/soak.py --keep-days 0.0004       # old rows age out as it runs
    .venv/bin/python bench/soak.py --model-delay 0.5        # each model call takes 0.5 s

The real bot (a subprocess) answers people on the fake Telegram Bot API with the offline model
(instant unless ``--model-delay``), streaming on, pacing and the guest cap off: greetings,
questions, urgent messages, a text file every 100 messages, and the owner setting a reminder
(due a minute later) every 500; the fake Telegram restarts every 5,000 answers (halfway between
two samples), so the bot reconnects. Every 1,000 answers it prints the bot's RSS, open
descriptors, threads, asyncio tasks, database size, and the answers' p50/p99 in that stretch
(``bench/soak_run.py`` drives and samples). At the end, the figures the issue asks for:
RSS after all vs after 2,000 (≤ 1.10×), p99 of the last 1,000 vs the second 1,000 (≤ 1.2×),
descriptors, threads and asyncio tasks flat (the second half's most no more than the
first half's after the first sample; sockets may vary by the HTTP pool's keep-alive).
"""

from __future__ import annotations

import argparse
import os
import sys
from itertools import pairwise
from pathlib import Path

# The repository instead of bench/, whose telegram.py would shadow python-telegram-bot.
_BENCH = str(Path(__file__).resolve().parent)
if _BENCH in sys.path:
    sys.path.remove(_BENCH)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.soak_run import Sample, SoakConfig, SoakResult, run_soak  # noqa: E402

RSS_LIMIT = 1.10
P99_LIMIT = 1.2
POOL_THREADS = min(32, (os.cpu_count() or 1) + 4)  # asyncio's default executor, at most
SOCKET_CHURN = 8  # keep-alive connections at a rest beyond the first half's most
HEADER = (f"{'answered':>9} {'seconds':>8} {'RSS MB':>7} {'heap MB':>7} {'fds':>4} "
          f"{'socks':>5} {'threads':>7} {'tasks':>5} {'db MB':>7} {'p50 ms':>7} {'p99 ms':>7} "
          f"{'SQLite MB':>9} {'Py kblk':>7} {'malloc MB':>9} {'free MB':>7}")


def line(sample: Sample) -> str:
    tasks = "?" if sample.tasks is None else str(sample.tasks)
    sqlite = "?" if sample.sqlite_kb is None else f"{sample.sqlite_kb / 1024:.1f}"
    blocks = "?" if sample.python_blocks is None else f"{sample.python_blocks / 1000:.0f}"
    malloc = "?" if sample.malloc_kb is None else f"{sample.malloc_kb / 1024:.1f}"
    kept = "?" if sample.malloc_free_kb is None else f"{sample.malloc_free_kb / 1024:.1f}"
    return (f"{sample.messages:>9,} {sample.seconds:>8.1f} {sample.rss_kb / 1024:>7.1f} "
            f"{sample.heap_kb / 1024:>7.1f} "
            f"{sample.fds:>4} {sample.sockets:>5} {sample.threads:>7} {tasks:>5} "
            f"{sample.db_bytes / 2**20:>7.1f} {sample.p50_ms:>7.1f} {sample.p99_ms:>7.1f} "
            f"{sqlite:>9} {blocks:>7} {malloc:>9} {kept:>7}")


def verdicts(result: SoakResult) -> list[tuple[str, bool]]:
    """The issue's figures, each with whether it is met."""
    samples = result.samples
    if len(samples) < 3:
        return [("too few samples for the figures (fewer than 3,000 messages)", False)]
    second, last = samples[1], samples[-1]
    rss = last.rss_kb / second.rss_kb
    heap = last.heap_kb / second.heap_kb
    p99 = last.p99_ms / second.p99_ms
    growth = [later.db_bytes - earlier.db_bytes for earlier, later in pairwise(samples)]
    half = len(growth) // 2
    early = samples[1:len(samples) // 2]  # after the warm-up: pools fill, then hold
    late = samples[len(samples) // 2:]
    files = {sample.fds - sample.sockets for sample in samples}
    return [
        (f"RSS after {last.messages:,} / after {second.messages:,}: {rss:.3f}× "
         f"({last.rss_kb / 1024:.1f} / {second.rss_kb / 1024:.1f} MB; ≤ {RSS_LIMIT}×)",
         rss <= RSS_LIMIT),
        (f"  of it anonymous memory (the heap; the rest is mapped files, the database among "
         f"them): {heap:.3f}× ({last.heap_kb / 1024:.1f} / {second.heap_kb / 1024:.1f} MB)",
         heap <= RSS_LIMIT),
        (f"reply p99 of the last 1,000 / the second 1,000: {p99:.2f}× "
         f"({last.p99_ms:.1f} / {second.p99_ms:.1f} ms; ≤ {P99_LIMIT}×)", p99 <= P99_LIMIT),
        (f"descriptors other than sockets: {', '.join(map(str, sorted(files)))} at every rest",
         len(files) == 1),
        (f"sockets (HTTP keep-alive comes and goes): at most {max(s.sockets for s in early)} "
         f"in the first half, {max(s.sockets for s in late)} in the second",
         max(s.sockets for s in late) <= max(s.sockets for s in early) + SOCKET_CHURN),
        (f"threads: at most {max(s.threads for s in early)} in the first half, "
         f"{max(s.threads for s in late)} in the second (the main one and asyncio's pool, "
         f"which grows to {POOL_THREADS} as it warms up)",
         max(s.threads for s in late) <= max(*(s.threads for s in early), 1 + POOL_THREADS)),
        (f"asyncio tasks at rest: at most {max(s.tasks or 0 for s in early)} in the first "
         f"half, {max(s.tasks or 0 for s in late)} in the second",
         max(s.tasks or 0 for s in late) <= max(s.tasks or 0 for s in early) + 2),
        (f"database growth per 1,000 answers: {sum(growth[:half]) / max(1, half) / 1024:.0f} "
         f"kB in the first half, {sum(growth[half:]) / max(1, len(growth) - half) / 1024:.0f}"
         f" kB in the second", True),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--people", type=int, default=200)
    parser.add_argument("--every", type=int, default=1_000, help="answers between samples")
    parser.add_argument("--in-flight", type=int, default=20,
                        help="people waiting for an answer at any moment")
    parser.add_argument("--restart-every", type=int, default=5_000,
                        help="answers between restarts of the fake Telegram (0: never)")
    parser.add_argument("--keep-days", help="FRONTDESK_KEEP_DAYS for the bot (e.g. 0.0001)")
    parser.add_argument("--model-delay", type=float, default=0.0,
                        help="seconds each model call takes")
    args = parser.parse_args()
    if args.people < 2 or args.messages < 1 or args.every < 1:
        parser.error("--people must be at least 2, --messages and --every at least 1")
    config = SoakConfig(messages=args.messages, people=args.people, every=args.every,
                        in_flight=args.in_flight, restart_every=args.restart_every,
                        keep_days=args.keep_days, model_delay=args.model_delay)
    print(f"soak: {config.messages:,} messages from {config.people} people, "
          f"{config.in_flight} at a time, model delay {config.model_delay:g} s"
          + (f", FRONTDESK_KEEP_DAYS={config.keep_days}" if config.keep_days else ""))
    print(HEADER)
    result = run_soak(config, report=lambda sample: print(line(sample), flush=True))
    print(f"fake Telegram restarted after {', '.join(f'{n:,}' for n in result.restarts_at)}"
          f" answers; reminders fired: {result.reminders_fired}")
    met = True
    for text, ok in verdicts(result):
        print(f"  {'ok  ' if ok else 'MISS'} {text}")
        met = met and ok
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
