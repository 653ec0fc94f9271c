"""`frontdesk restore PATH`: put a backup back, with the bot stopped; the database it replaces is
kept aside."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bot.backups.archive import BackupError
from bot.backups.restore import restore_backup
from bot.config.settings import Settings


def main(args: argparse.Namespace, settings: Settings) -> int:
    """Restore, or one line saying why not (exit status 1)."""
    backup = Path(args.path).expanduser()
    try:
        done = restore_backup(settings.home, backup)
    except BackupError as exc:
        print(f"frontdesk: not restored: {exc}", file=sys.stderr)
        return 1
    manifest = done.manifest
    print(f"Restored {backup} (taken {manifest.created_at} by Frontdesk {manifest.frontdesk}, "
          f"{len(manifest.migrations)} migrations) into {settings.home}.")
    if done.replaced is not None:
        print(f"The database it replaced is kept at {done.replaced}.")
    if done.pending:
        print(f"{done.pending} migrations of this version are applied at the next start, "
              "after a backup.")
    return 0
