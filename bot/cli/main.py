"""The `frontdesk` command line: parse arguments, load settings, dispatch to one command module.

Every subcommand lives in ``bot/cli/<name>.py`` as ``main(args, settings) -> int`` and is
imported only when used, so ``frontdesk --help`` stays fast (the model SDKs take ~1 s to import).
A bad setting stops any command with exit status 2 and one line naming the variable; a bug
never shows a traceback: one line, and the log file that holds the details (exit status 1).
Before a command that opens the database, the database is checked once
(``bot.backups.upgrade``): a newer one stops the command, an older one is backed up and
migrated; ``--version`` says where it stands.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.config.settings import Settings


def build_parser() -> argparse.ArgumentParser:
    """The whole CLI contract in one place."""
    parser = argparse.ArgumentParser(
        prog="frontdesk",
        description="Frontdesk: a self-hosted assistant that triages every message with a graph.",
    )
    parser.add_argument("--version", action=VersionAction, nargs=0,
                        help="show the version and the database's state, then exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    sub.add_parser("run", help="start every adapter with a token configured; else the console")

    chat = sub.add_parser("chat", help="send one message through the gateway and print the reply")
    chat.add_argument("text", metavar="TEXT", nargs="?", default="")
    chat.add_argument("--attach", metavar="PATH", help="send this file with the message")
    chat.add_argument("--user", metavar="ID", help="send as this allowed (non-owner) user")
    chat.add_argument("--json", action="store_true", help="print a JSON object only")

    agenda = sub.add_parser("agenda", help="events overlapping a window (default: today)")
    agenda.add_argument("--calendar", metavar="PATH_OR_URL")
    agenda.add_argument("--start", metavar="ISO")
    agenda.add_argument("--end", metavar="ISO")
    agenda.add_argument("--tz", metavar="ZONE")
    agenda.add_argument("--json", action="store_true")

    memory = sub.add_parser("memory", help="notes: add, search, forget; export and import them")
    memory_sub = memory.add_subparsers(dest="memory_command", metavar="ACTION", required=True)
    memory_sub.add_parser("add", help="save a note").add_argument("text", metavar="TEXT")
    memory_sub.add_parser("search", help="search notes").add_argument("query", metavar="QUERY")
    memory_sub.add_parser("forget", help="delete a note").add_argument("id", metavar="ID")
    export = memory_sub.add_parser("export", help="every note with its scope, to stdout")
    export.add_argument("--json", action="store_true", help="as JSON (the default is JSON Lines)")
    memory_sub.add_parser("import", help="notes from an export file").add_argument(
        "file", metavar="FILE")

    dashboard = sub.add_parser("dashboard", help="serve the local web page of runs")
    dashboard.add_argument("--port", type=int, default=None)
    dashboard.add_argument("--host", default="127.0.0.1")

    runs = sub.add_parser("runs", help="list recent runs, or show one run's trace")
    runs.add_argument("run_id", nargs="?", metavar="RUN_ID")
    runs.add_argument("--limit", type=int, default=20, metavar="N", help="list N runs (20)")
    runs.add_argument("--before", type=float, metavar="T",
                      help="the page after: runs started before T (seconds since 1970; the "
                           "last line's `before=`)")

    reminders = sub.add_parser("reminders", help="list every pending reminder, or cancel one")
    reminders.add_argument("action", nargs="?", choices=["cancel"], metavar="cancel")
    reminders.add_argument("id", nargs="?", metavar="ID")

    meetings = sub.add_parser("meetings", help="meeting requests and bookings, soonest first")
    meetings.add_argument("--json", action="store_true", help="print a JSON list only")

    tools = sub.add_parser("tools", help="every tool (built-in and MCP), who may use it, "
                                         "whether it asks the owner first")
    tools.add_argument("--json", action="store_true", help="print a JSON list only")

    evaluate = sub.add_parser("eval", help="how well triage routes a labelled set of messages: "
                                           "accuracy, confusion, cost and time")
    evaluate.add_argument("file", nargs="?", metavar="FILE",
                          help="JSON Lines: {\"text\", \"route\", \"sender\"} a line")
    evaluate.add_argument("--sample", action="store_true",
                          help="the labelled sample that ships with Frontdesk, instead of FILE")
    evaluate.add_argument("--offline", action="store_true",
                          help="the offline router: no model call, nothing spent")
    evaluate.add_argument("--json", action="store_true", help="print a JSON object only")
    evaluate.add_argument("--report", metavar="PATH", help="also write an HTML page here")
    evaluate.add_argument("--max-usd", type=float, metavar="X", dest="max_usd",
                          help="refuse a paid run estimated past X dollars "
                               "(default: what is left of today's budget)")

    graph = sub.add_parser("graph", help="print a workflow's graph")
    graph.add_argument("name", metavar="NAME")
    graph.add_argument("--mermaid", action="store_true", help="as a Mermaid diagram (default)")

    # the first ten minutes: set-up, checks, who may write
    sub.add_parser("setup", help="an interactive wizard that writes .env (needs a terminal)")
    doctor = sub.add_parser("doctor", help="check the settings, data, platforms and models")
    doctor.add_argument("--json", action="store_true", help="print a JSON object only")
    people = sub.add_parser("people", help="people allowed or blocked through pairing")
    people.add_argument("action", nargs="?", choices=["remove"], metavar="remove")
    people.add_argument("id", nargs="?", metavar="ID")
    people.add_argument("--limit", type=int, default=50, metavar="N", help="list N people (50)")
    people.add_argument("--before", type=float, metavar="T",
                        help="the page after: people who asked before T (the list's last "
                             "line gives it)")

    # keeping it: a service, backups, restores
    service = sub.add_parser("service", help="install or remove a systemd unit that runs "
                                             "`frontdesk run`")
    service.add_argument("action", choices=["install", "uninstall"], metavar="install|uninstall")
    scope = service.add_mutually_exclusive_group()
    scope.add_argument("--user", dest="system", action="store_false",
                       help="a unit of your own user (the default)")
    scope.add_argument("--system", dest="system", action="store_true",
                       help="a system-wide unit (needs root)")
    service.set_defaults(system=False)  # --user unless --system is given
    backup = sub.add_parser("backup", help="a consistent copy of the database, attachments and "
                                           "traces, while the bot runs")
    backup.add_argument("path", nargs="?", metavar="PATH",
                        help="the file to write (default: under FRONTDESK_HOME/backups)")
    restore = sub.add_parser("restore", help="put a backup back (the bot must be stopped)")
    restore.add_argument("path", metavar="PATH")
    prune = sub.add_parser("prune", help="remove what is older than FRONTDESK_KEEP_DAYS now, "
                                         "and print what went, per table")
    prune.add_argument("--days", type=days, metavar="N",
                       help="keep N days instead (fractional allowed: 0.5 is twelve hours)")
    prune.add_argument("--dry-run", action="store_true", help="count, remove nothing")
    prune.add_argument("--json", action="store_true", help="print a JSON object only")
    return parser


def days(raw: str) -> float:
    """``--days``: a number of days above 0 (fractional allowed)."""
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"{raw!r}: expected a number of days above 0, e.g. 90 "
                                         "or 0.5")
    return value


# Commands that run on bad settings too (they report or repair them): settings may be None.
WITHOUT_SETTINGS = {"setup", "doctor"}
# Commands that run whatever the database's state: they do not open it (agenda, service,
# setup), report it (doctor) or replace it (restore). Every other one is checked first.
WITHOUT_DATABASE_CHECK = {"setup", "doctor", "restore", "service", "agenda"}


class VersionAction(argparse.Action):
    """``--version``: the installed version and the database's state, read without writing."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print(f"frontdesk {version()} (database: {database_summary()})")
        parser.exit()


def database_summary() -> str:
    """'no database yet', '34 migrations, up to date', '32 migrations, 2 to apply', ..."""
    from pathlib import Path

    from dotenv import load_dotenv

    from bot.config.settings import Settings
    from bot.schema import read_state

    load_dotenv(os.path.join(os.getcwd(), ".env"), override=False)
    try:
        database = Settings.from_env(os.environ).database
    except ValueError:  # bad settings elsewhere: FRONTDESK_HOME alone still says where
        home = os.environ.get("FRONTDESK_HOME") or Path.home() / ".frontdesk"
        database = Path(home).expanduser() / "frontdesk.db"
    return read_state(database).summary()


def version() -> str:
    """The installed package's version."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("frontdesk")
    except PackageNotFoundError:
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    from dotenv import load_dotenv

    from bot.config.settings import Settings  # after parsing: --help needs none of this

    load_dotenv(os.path.join(os.getcwd(), ".env"), override=False)
    try:
        settings: Settings | None = Settings.from_env(os.environ)
        assert settings is not None
        settings.check_files()
    except ValueError as exc:
        if args.command not in WITHOUT_SETTINGS:
            print(f"frontdesk: {exc}", file=sys.stderr)
            return 2
        settings = None
    if settings is not None:
        from bot.config.logs import quiet_last_resort

        quiet_last_resort(settings)
    try:
        if settings is not None and args.command not in WITHOUT_DATABASE_CHECK:
            from bot.backups.upgrade import UpgradeStop, prepare_database

            try:
                prepare_database(settings.home, say=lambda line: print(
                    f"frontdesk: {line}", file=sys.stderr))
            except UpgradeStop as stop:
                print(f"frontdesk: {stop}", file=sys.stderr)
                return 1
        module = importlib.import_module(f"bot.cli.{args.command}")
        code: int = module.main(args, settings)
    except KeyboardInterrupt:
        print("frontdesk: stopped", file=sys.stderr)
        return 130
    except Exception as error:  # a bug: one line for the user, the details in the log file
        return report_bug(error, settings or Settings.from_env({}))
    return code


def report_bug(error: Exception, settings: Settings) -> int:
    """Tell the user in one line (secrets masked) where the details of a bug are; status 1."""
    from bot.config.logs import SecretFilter, write_details
    from bot.config.text import one_line

    path = write_details(settings, error)
    said = SecretFilter(settings.secrets()).scrub(one_line(str(error)))
    print(f"frontdesk: unexpected error ({type(error).__name__}: {said}). Details are in "
          f"{path}; please include that file if you report it.", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
