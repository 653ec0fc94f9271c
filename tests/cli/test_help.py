"""The console script exists and answers --help without importing the model SDKs."""

from __future__ import annotations

import subprocess
import sys


def test_help_lists_every_command() -> None:
    out = subprocess.run([sys.executable, "-m", "bot.cli.main", "--help"], capture_output=True,
                         text=True, check=True).stdout
    for command in ("run", "chat", "agenda", "memory", "dashboard", "runs", "graph"):
        assert command in out


def test_help_does_not_import_sdks() -> None:
    code = ("import sys; from bot.cli.main import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "sdks = ('anthropic', 'openai', 'telegram', 'discord')\n"
            "bad = [m for m in sdks if m in sys.modules]\n"
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
