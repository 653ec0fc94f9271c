"""The systemd unit `frontdesk service install` writes: what it says, where it goes.

The unit runs ``frontdesk run`` in the directory that holds ``.env``, so the bot reads its
settings, secrets included, from there exactly as it does when started by hand (one parser,
python-dotenv's, for that file: systemd's ``EnvironmentFile=`` reads quotes and ``export``
differently, so it is not used). The unit itself holds no secret: ``render`` refuses a text
that contains one. It is ``Type=notify`` (``frontdesk run`` says READY=1 once its adapters
serve), restarts on failure but not after a bad setting (exit status 2: restarting would not
fix it), and gives a stop ``TIMEOUT_STOP_S``: SIGTERM lets the sends under way finish and
leaves every unanswered message in the inbox for the next start.

Every value is written so that systemd reads back exactly what was meant (systemd.syntax,
systemd.exec): ``%`` doubled, arguments and environment in double quotes, and the working
folder with a closing ``/`` (see ``_folder``); what no unit line can hold (a line break, a
control character, bytes that are not UTF-8) is refused, naming it.

Usage::

    plan = UnitPlan(system=False, command=run_command(sys.argv[0], sys.executable),
                    workdir=Path.cwd(), environment={"FRONTDESK_HOME": "/srv/fd"})
    unit_path(False, os.environ).write_text(render(plan, settings.secrets()))
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

UNIT_NAME = "frontdesk.service"
SERVICE = "frontdesk"
SYSTEM_UNITS = Path("/etc/systemd/system")
TIMEOUT_STOP_S = 30  # SIGTERM to exit: room for the sends under way and closing (run.py)
RESTART_SEC = 5
BAD_SETTINGS_STATUS = 2  # `frontdesk` exits 2 on a bad setting: no restart loop on it
_PLAIN_ARG = re.compile(r"[A-Za-z0-9_./:@+=,-]+")


@dataclass(frozen=True)
class UnitPlan:
    """What the unit says: a user or a system unit, the command, where, with what."""

    system: bool
    command: list[str]  # ExecStart's argv, absolute executable first
    workdir: Path  # holds .env
    environment: dict[str, str] = field(default_factory=dict)  # nothing secret
    user: str | None = None  # a system unit's User=


def user_units_dir(environ: Mapping[str, str]) -> Path:
    """Where systemd looks for a user's own units: ``$XDG_CONFIG_HOME/systemd/user``."""
    config = environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "systemd" / "user"


def unit_path(system: bool, environ: Mapping[str, str],
              system_dir: Path = SYSTEM_UNITS) -> Path:
    """Where the unit file goes (``system_dir`` stands in for /etc in tests)."""
    return (system_dir if system else user_units_dir(environ)) / UNIT_NAME


def wanted_by(system: bool) -> str:
    """The target that starts the unit: at boot (system) or at the user's login."""
    return "multi-user.target" if system else "default.target"


def enabled_link(path: Path, system: bool) -> Path:
    """The link `systemctl enable` makes beside the unit file."""
    return path.parent / f"{wanted_by(system)}.wants" / UNIT_NAME


def run_command(argv0: str, executable: str) -> list[str]:
    """``frontdesk run`` as an absolute command: the running ``frontdesk`` script when that is
    what was started, else this Python with ``-m bot.cli.main``."""
    script = Path(argv0)
    if script.name == "frontdesk" and script.is_file() and os.access(script, os.X_OK):
        return [str(script.absolute()), "run"]
    return [str(Path(executable).absolute()), "-m", "bot.cli.main", "run"]


def _specifiers(text: str) -> str:
    """``%`` starts a systemd specifier everywhere in a unit: a literal one is doubled. A
    line break would end the line, and a control character or bytes that are not UTF-8
    (which Python holds as lone surrogates) cannot be written or read back: refused."""
    if any(unicodedata.category(char) in ("Cc", "Cs") for char in text):
        raise ValueError(f"a unit file cannot hold {text!r} (it has a line break, a control "
                         "character or bytes that are not UTF-8): install from a folder "
                         "with a plainer name")
    return text.replace("%", "%%")


def _folder(path: Path) -> str:
    """WorkingDirectory's value. systemd takes it as written (no quotes, no escapes) but
    strips the line's trailing whitespace, and a trailing backslash joins the next line onto
    it: a closing ``/``, which systemd drops when it simplifies the path, keeps a folder
    name ending in either whole. A relative path or a ``..`` step systemd refuses."""
    text = str(path)
    if not path.is_absolute() or ".." in path.parts:
        raise ValueError(f"systemd needs the service's folder as an absolute path without "
                         f"'..': {text!r}")
    written = _specifiers(text)
    return written if written.endswith("/") else written + "/"


def _quoted(text: str) -> str:
    """A value in systemd's double quotes (backslash escapes), specifiers kept literal."""
    text = _specifiers(text)
    if _PLAIN_ARG.fullmatch(text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def exec_line(command: list[str]) -> str:
    """ExecStart's value: each argument quoted as needed, ``$`` kept literal (systemd takes
    the executable's path as written, and refuses one with quotes or backslashes)."""
    executable, *args = command
    if any(char in executable for char in "\"'\\"):
        raise ValueError(f"systemd cannot run a program whose path has quotes or backslashes "
                         f"({executable}): install Frontdesk under a plainer path")
    return " ".join([_quoted(executable), *(_quoted(arg).replace("$", "$$") for arg in args)])


def render(plan: UnitPlan, secrets: Iterable[str]) -> str:
    """The unit file's text; ValueError if a secret would end up in it."""
    lines = [
        "# Written by `frontdesk service install`; `frontdesk service uninstall` removes it.",
        "# Settings and secrets are read from .env in WorkingDirectory, never written here.",
        "[Unit]",
        "Description=Frontdesk, a self-hosted assistant bot",
        "Wants=network-online.target",
        "After=network-online.target",
        "",
        "[Service]",
        "Type=notify",
        "NotifyAccess=main",
        f"WorkingDirectory={_folder(plan.workdir)}",
    ]
    lines += [f"Environment={_quoted(f'{name}={value}')}"
              for name, value in sorted(plan.environment.items())]
    if plan.system and plan.user:
        lines.append(f"User={_specifiers(plan.user)}")
    lines += [
        f"ExecStart={exec_line(plan.command)}",
        "Restart=on-failure",
        f"RestartSec={RESTART_SEC}",
        f"RestartPreventExitStatus={BAD_SETTINGS_STATUS}",
        "# SIGTERM to the bot only; it stops its own helpers (MCP servers) in order.",
        "KillMode=mixed",
        f"TimeoutStopSec={TIMEOUT_STOP_S}",
        "",
        "[Install]",
        f"WantedBy={wanted_by(plan.system)}",
    ]
    text = "\n".join(lines) + "\n"
    for secret in secrets:
        if secret and secret in text:
            raise ValueError("a secret would be written into the unit file; keep secrets in "
                             ".env only")
    return text
