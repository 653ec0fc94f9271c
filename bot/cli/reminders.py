"""`frontdesk reminders [cancel ID]`: every pending reminder, one a line; or cancel one.

A reminder's text is whoever set it's (a guest's too): each is shown as one line with no
terminal escape, control character or bidi override (``bot.config.text.shown``).
"""

from __future__ import annotations

import argparse

from bot.config.settings import Settings
from bot.config.text import shown
from bot.reminders.store import Reminder, Reminders
from bot.schema import open_database


def main(args: argparse.Namespace, settings: Settings) -> int:
    """Print the pending reminders (the bot owner's view: everyone's); exit 1 on a bad id."""
    if not settings.database.exists():
        print("No reminders are pending.")
        return 0
    with open_database(settings.database) as db:  # the reminders alone
        reminders = Reminders(db)
        if args.action == "cancel":
            raw = (args.id or "").lstrip("#")
            if not raw.isdigit():
                print("frontdesk reminders cancel ID: the number the list shows.")
                return 1
            if not reminders.cancel(int(raw), "owner", True):
                print(f"No pending reminder {raw}.")
                return 1
            print(f"Cancelled reminder {raw}.")  # a running bot sees it at its next wake
            return 0
        pending = reminders.pending()
        if not pending:
            print("No reminders are pending.")
        for reminder in pending:
            print(list_line(reminder))
        return 0


def list_line(reminder: Reminder) -> str:
    """id, local time, who, where, kind and repeat, then the text."""
    due = reminder.due
    where = f"{reminder.platform}/{shown(reminder.chat_id, 'log') or '(owner chat)'}"
    repeats = f" every {shown(reminder.rrule, 'log')}" if reminder.rrule else ""
    return (f"{reminder.id:>4}  {due:%a %d %b %Y %H:%M %Z}  {reminder.scope:<16} {where:<24} "
            f"{reminder.kind}{repeats}  {shown(reminder.text, 'log')}")
