"""`frontdesk prune [--days N] [--dry-run] [--json]`: remove what is older now, per table.

What goes and what stays is ``bot.retention.prune``'s (FRONTDESK_KEEP_DAYS, default 90 days);
the running bot does the same every night. The bot may be running: the removal is one
transaction on the shared file, which the bot's writes wait for.
"""

from __future__ import annotations

import argparse
import json

from bot.config.settings import Settings
from bot.retention.prune import Pruned, prune
from bot.schema import open_database


def main(args: argparse.Namespace, settings: Settings) -> int:
    """Prune (or count, ``--dry-run``), then print the counts: a table, or ``--json``."""
    with open_database(settings.database) as db:
        result = prune(db, settings, args.days, dry_run=args.dry_run)
    if args.json:
        print(json.dumps(result.as_json(), indent=2))
        return 0
    print("\n".join(report_lines(result)))
    return 0


def report_lines(result: Pruned) -> list[str]:
    """What went (or would go), a line per table, then the file's size."""
    verb = "would remove" if result.dry_run else "removed"
    head = (f"Kept {result.days:g} days (since {result.before:%Y-%m-%d %H:%M} UTC); "
            f"{verb} {result.total:,}:")
    width = max(len(name) for name in result.removed)
    lines = [head, *(f"  {name:<{width}}  {count:>9,}" for name, count in result.removed.items())]
    size = f"database: {_mb(result.bytes_before)} -> {_mb(result.bytes_after)}"
    return [*lines, size if not result.dry_run else f"database: {_mb(result.bytes_before)}"]


def _mb(size: int) -> str:
    return f"{size / 1_048_576:.1f} MB"
