"""`frontdesk backup [PATH]`: one consistent backup file of the database, attachments and traces,
taken safely while the bot runs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bot.backups.archive import BackupError, default_path, make_backup
from bot.config.settings import Settings


def main(args: argparse.Namespace, settings: Settings) -> int:
    """Write the backup (default: under FRONTDESK_HOME/backups) and say where."""
    target = Path(args.path).expanduser() if args.path else None
    if target is not None and target.is_dir():  # a folder: the timestamped name inside it
        target = target / default_path(settings.home).name
    try:
        path, manifest = make_backup(settings.home, target)
    except BackupError as exc:
        print(f"frontdesk: no backup made: {exc}", file=sys.stderr)
        return 1
    folders = ", ".join(f"{name}/ ({count} files)" for name, count in manifest.folders.items())
    print(f"Backed up {settings.database.name} ({len(manifest.migrations)} migrations)"
          f"{', ' + folders if folders else ''} to {path}")
    return 0
