"""Telegram: python-telegram-bot between Telegram and the gateway (intake, format, files, start).

Imports the ground floor (``bot.messages``, ``bot.config``) and ``bot.media``: it is handed the
desk's inbound port, never imports ``bot.chat``; nothing imports this package but the CLI.

python-telegram-bot imports ``cryptography`` whenever it is installed (the MCP client's
dependencies install it), only to decrypt Telegram Passport data, which Frontdesk never asks
for; that import costs ~8 MB and tens of milliseconds at every start. So this package, which
every module of the adapter goes through first, imports python-telegram-bot with
``cryptography`` hidden, the way it would be on a machine without it; the MCP client still
imports it normally when it needs it.
"""

from __future__ import annotations

import sys


def _import_telegram_without_passport() -> None:
    """Import python-telegram-bot, unless already imported, without its Passport crypto."""
    if "telegram" in sys.modules or "cryptography" in sys.modules:
        return
    sys.modules["cryptography"] = None  # type: ignore[assignment]  # makes its import fail
    try:
        import telegram  # noqa: F401  # it takes "no cryptography" as Passport unavailable
    except ImportError:  # a release that needs cryptography after all: import it as it is
        for name in [name for name in sys.modules if name.partition(".")[0] == "telegram"]:
            del sys.modules[name]
    finally:
        del sys.modules["cryptography"]


_import_telegram_without_passport()
