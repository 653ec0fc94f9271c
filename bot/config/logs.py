"""Logging set-up: readable lines on stderr, secrets masked, chatty HTTP loggers kept quiet.

httpx logs every request URL at INFO, and a Telegram URL carries the bot token, so the HTTP
libraries log at WARNING only; and every record passes a filter that masks each configured
secret, wherever it appears (message, arguments or a formatted traceback). A traceback goes
to the log file under ``FRONTDESK_HOME/logs`` only: the terminal gets one line that names the
error and that file (a user never sees a Python traceback).

Under systemd (``journal=True``), stderr is the journal: each record is one line with no
clock (the journal stamps it) and a ``<N>`` syslog priority prefix, which journald reads as
the entry's priority, so ``journalctl -p warning`` shows the warnings and errors.

A message may quote someone else's words (a refused stranger's name, an error a server
sent): every record's message is shown as a log line (``bot.config.text.shown``), one line
with no terminal escapes, control characters or bidi overrides, on stderr and in the file.

The file may sit on a full disk: its lines are then dropped quietly (the terminal still has
each; logging's own "--- Logging error ---" traceback per record would bury them), and the
first line written once there is room says how many were lost (``LogFile``).
"""

from __future__ import annotations

import contextlib
import logging
import logging.handlers
import os
import sys
import tempfile
import traceback
from collections.abc import Iterable, Mapping
from pathlib import Path

from bot.config.disk import disk_full
from bot.config.settings import Settings
from bot.config.text import one_line, shown

QUIET = ("httpx", "httpx2", "httpcore", "telegram.ext", "discord.gateway", "discord.http",
         "aiohttp.access")
# discord.py's notices that read like errors but are not: Frontdesk uses no voice.
VOICE_NOTICE = ("PyNaCl", "davey", "voice will NOT be supported")
MASK = "[redacted]"
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
JOURNAL_FORMAT = "<%(priority)d>%(levelname)s %(name)s: %(message)s"
SYSLOG_PRIORITY = {logging.DEBUG: 7, logging.INFO: 6, logging.WARNING: 4, logging.ERROR: 3,
                   logging.CRITICAL: 2}


def under_service_manager(environ: Mapping[str, str], fd: int = 2) -> bool:
    """Whether systemd started this process (plain output then: no colours, no layout).

    A desktop's terminal may itself run as a systemd service, and its shells inherit
    ``INVOCATION_ID``: that counts only when ``fd`` (stderr) is not a terminal."""
    if stderr_is_journal(environ, fd) or environ.get("NOTIFY_SOCKET"):
        return True
    return bool(environ.get("INVOCATION_ID")) and not os.isatty(fd)


def stderr_is_journal(environ: Mapping[str, str], fd: int = 2) -> bool:
    """Whether ``fd`` is the journal stream systemd connected (``JOURNAL_STREAM`` names its
    device and inode, so a redirected stderr of a child process does not count)."""
    device, inode = environ.get("JOURNAL_STREAM", "").partition(":")[::2]
    try:
        stat = os.fstat(fd)
        return (int(device), int(inode)) == (stat.st_dev, stat.st_ino)
    except (ValueError, OSError):
        return False


class SecretFilter(logging.Filter):
    """Masks secrets in every record that passes through a handler."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self.secrets = sorted({s for s in secrets if len(s) >= 6}, key=len, reverse=True)

    def scrub(self, text: str) -> str:
        """``text`` with every secret replaced."""
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            record.msg = self.scrub(record.getMessage())
            record.args = None
            if record.exc_info and not record.exc_text:
                record.exc_text = logging.Formatter().formatException(record.exc_info)
            if record.exc_text:
                record.exc_text = self.scrub(record.exc_text)
        return True


def plain_message(record: logging.LogRecord) -> bool:
    """Make a record's message one clean line (a filter function): no ESC sequence, control
    character or bidi override of anyone's reaches a terminal or the file, and no quoted
    line break forges a line of its own."""
    record.msg = shown(record.getMessage(), "log")
    record.args = None
    return True


def log_file(settings: Settings) -> Path:
    """Where the details (tracebacks) go: FRONTDESK_HOME/logs/frontdesk.log, or the temporary
    directory when the home cannot be written."""
    folder = settings.home / "logs"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return folder / "frontdesk.log"
    except OSError:
        return Path(tempfile.gettempdir()) / "frontdesk.log"


class LogFile(logging.handlers.RotatingFileHandler):
    """The log file, which a full disk never turns into a traceback per record on stderr."""

    dropped = 0  # records the full disk kept out of the file since the last one written

    def emit(self, record: logging.LogRecord) -> None:
        if self.dropped:
            missed = self.dropped
            self.dropped = 0
            self._end_line()
            super().emit(logging.makeLogRecord({
                "name": __name__, "levelno": logging.WARNING, "levelname": "WARNING",
                "msg": f"{missed} log lines were not written here, or cut short: the disk was "
                       "full"}))
            if self.dropped:  # still full: the count waits, and this record is dropped too
                self.dropped = missed + 1
                return
        super().emit(record)

    def _end_line(self) -> None:
        """End the line the full disk cut short, so the next one starts on a line of its own."""
        with contextlib.suppress(OSError), open(self.baseFilename, "rb+") as file:
            if file.seek(0, os.SEEK_END) and file.seek(-1, os.SEEK_END) >= 0 \
                    and file.read(1) != b"\n":
                file.write(b"\n")

    def handleError(self, record: logging.LogRecord) -> None:
        error = sys.exc_info()[1]
        if not disk_full(error):
            super().handleError(record)
            return
        self.dropped += 1
        stream = self.stream
        self.stream = None  # reopened by the next record
        if stream is not None:
            with contextlib.suppress(OSError):  # its buffer holds the line that did not fit
                stream.close()


class OneLineFormatter(logging.Formatter):
    """A record as one line: an exception's traceback is replaced by a pointer to the file."""

    def __init__(self, details: Path, secrets: SecretFilter, fmt: str = LOG_FORMAT) -> None:
        super().__init__(fmt)
        self.details = details
        self.secrets = secrets

    def format(self, record: logging.LogRecord) -> str:
        record.message = record.getMessage()
        record.asctime = self.formatTime(record, self.datefmt)
        text = self.formatMessage(record)
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            said = self.secrets.scrub(one_line(str(error)))
            text += f" ({type(error).__name__}: {said}; details in {self.details})"
        elif record.exc_text:
            text += f" (details in {self.details})"
        return text


class JournalFormatter(OneLineFormatter):
    """A record as one journal line: its syslog priority first, no clock, no line break."""

    def __init__(self, details: Path, secrets: SecretFilter) -> None:
        super().__init__(details, secrets, JOURNAL_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        record.priority = SYSLOG_PRIORITY.get(record.levelno, 6)
        return " ".join(super().format(record).splitlines())


def write_details(settings: Settings, error: BaseException) -> Path:
    """Append an error's traceback (secrets masked) to the log file; that file's path."""
    path = log_file(settings)
    text = "".join(traceback.format_exception(error))
    scrubbed = SecretFilter(settings.secrets()).scrub(text)
    try:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"{logging.Formatter().formatTime(logging.makeLogRecord({}))} "
                         f"ERROR frontdesk: unexpected error\n{scrubbed}\n")
    except OSError:
        pass
    return path


class LastResort(logging.StreamHandler):  # type: ignore[type-arg]
    """One line on stderr; an error's traceback appended to the log file instead."""

    def __init__(self, settings: Settings) -> None:
        super().__init__()
        self.settings = settings

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[1] is not None:
            write_details(self.settings, record.exc_info[1])
        super().emit(record)


def quiet_last_resort(settings: Settings) -> None:
    """For commands that set up no logging: what Python prints of a warning or an error
    logged with no handler stays one line (no traceback), secrets masked."""
    handler = LastResort(settings)
    secret_filter = SecretFilter(settings.secrets())
    handler.setFormatter(OneLineFormatter(log_file(settings), secret_filter, "%(message)s"))
    handler.addFilter(secret_filter)
    handler.addFilter(plain_message)
    handler.setLevel(logging.WARNING)
    logging.lastResort = handler


def setup_logging(settings: Settings, level: str | None = None, *,
                  journal: bool = False) -> SecretFilter:
    """Configure the root logger once for the CLI; returns the filter (tests use ``scrub``).
    ``journal``: stderr is systemd's journal (one line per record, with its priority)."""
    details = log_file(settings)
    secret_filter = SecretFilter(settings.secrets())
    terminal = logging.StreamHandler()
    terminal.setFormatter(JournalFormatter(details, secret_filter) if journal
                          else OneLineFormatter(details, secret_filter))
    terminal.addFilter(secret_filter)
    terminal.addFilter(plain_message)
    handlers: list[logging.Handler] = [terminal]
    try:
        to_file = LogFile(details, maxBytes=1 << 20, backupCount=3, encoding="utf-8")
        to_file.setFormatter(logging.Formatter(LOG_FORMAT))
        to_file.addFilter(secret_filter)
        to_file.addFilter(plain_message)
        handlers.append(to_file)
    except OSError:  # a read-only home still runs; the terminal still gets every line
        pass
    root = logging.getLogger()
    root.handlers[:] = handlers
    root.setLevel(level or settings.log_level)
    for name in QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)
    logging.getLogger("discord.client").addFilter(no_voice_notice)
    return secret_filter


def no_voice_notice(record: logging.LogRecord) -> bool:
    """Drop discord.py's "voice will not be supported" notices (a filter function)."""
    return not any(word in str(record.msg) for word in VOICE_NOTICE)
