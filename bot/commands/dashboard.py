"""`frontdesk dashboard`: not built yet (placeholder until its issue lands)."""

from __future__ import annotations

import argparse
import sys

from bot.settings import Settings


def main(args: argparse.Namespace, settings: Settings) -> int:
    """Say plainly that this command is not available yet."""
    print("frontdesk dashboard: not available yet", file=sys.stderr)
    return 1
