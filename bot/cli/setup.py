"""`frontdesk setup`: the interactive wizard (``bot.setup.wizard``); it needs a terminal."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from bot.config.settings import Settings
from bot.setup.probes import ProbeError
from bot.setup.wizard import Wizard

NO_TERMINAL = ("frontdesk setup asks questions, so it needs a terminal. Run it in one, or "
               "write .env by hand: config/.env.example lists every variable.")


def main(args: argparse.Namespace, settings: Settings | None) -> int:
    """Ask, check, write ``.env``; exit 2 without a terminal, 1 when a check cannot finish."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(f"frontdesk: {NO_TERMINAL}", file=sys.stderr)
        return 2
    import readline  # noqa: F401 - line editing for input()

    try:
        return Wizard(os.environ).run(Path.cwd() / ".env")
    except ProbeError as problem:
        print(f"frontdesk: {problem} Nothing was written.", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, EOFError):
        print("\nfrontdesk: setup stopped; nothing was written.", file=sys.stderr)
        return 130
