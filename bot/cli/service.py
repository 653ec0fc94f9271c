"""`frontdesk service install|uninstall [--user|--system]`: a systemd unit for `frontdesk run`.

``install`` writes the unit (``bot.service.unit``) for the settings of the current directory:
the service reads ``.env`` from here, so a token must be in that file (a unit never holds a
secret), and a setting that comes only from the shell is named, since the service would not
see it. It prints the ``systemctl`` commands that enable it and the ``journalctl`` one that
follows it; it does not run them (they may need sudo, and enabling is the owner's choice).
``uninstall`` removes the unit once it is no longer enabled.
"""

from __future__ import annotations

import argparse
import os
import pwd
import sys
from collections.abc import Mapping
from pathlib import Path

from dotenv import dotenv_values

from bot.config.settings import Settings
from bot.service.unit import (
    SERVICE,
    SYSTEM_UNITS,
    UnitPlan,
    enabled_link,
    render,
    run_command,
    unit_path,
)

ENV_FILE = ".env"
TOKENS = ("TELEGRAM_BOT_TOKEN", "DISCORD_BOT_TOKEN")
# The variables Frontdesk reads; one set in the shell only does not reach the service.
SETTING_PREFIXES = ("FRONTDESK_", "TELEGRAM_", "DISCORD_", "OPENAI_", "ANTHROPIC_")


def main(args: argparse.Namespace, settings: Settings) -> int:
    """Install or uninstall; 0 when done, 1 when it cannot be done, 2 for a bad set-up."""
    if args.action == "install":
        return install(settings, system=args.system, workdir=Path.cwd(), environ=os.environ)
    return uninstall(system=args.system, environ=os.environ)


def systemctl(system: bool) -> str:
    """How to call systemctl for this kind of unit."""
    if not system:
        return "systemctl --user"
    return "systemctl" if os.geteuid() == 0 else "sudo systemctl"


def follow_command(system: bool) -> str:
    """The journalctl command that follows the service's log."""
    return f"journalctl -u {SERVICE} -f" if system else f"journalctl --user-unit {SERVICE} -f"


def install(settings: Settings, *, system: bool, workdir: Path, environ: Mapping[str, str],
            system_dir: Path = SYSTEM_UNITS, argv0: str | None = None) -> int:
    """Write the unit for the settings in ``workdir`` (``system_dir`` stands in for /etc in
    tests); print what to run next."""
    env_file = workdir / ENV_FILE
    in_file = {k: v for k, v in dotenv_values(env_file).items() if v} if env_file.is_file() \
        else {}
    if not any(in_file.get(token) for token in TOKENS):
        print(f"frontdesk service: no TELEGRAM_BOT_TOKEN or DISCORD_BOT_TOKEN in {env_file}. "
              "The service reads its settings and secrets from .env in the directory you "
              "install it from: run `frontdesk setup` here first, or cd to where .env is.",
              file=sys.stderr)
        return 2
    environment = {}
    if "FRONTDESK_HOME" not in in_file and not any(s in str(settings.home)
                                                   for s in settings.secrets()):
        environment["FRONTDESK_HOME"] = str(settings.home.absolute())  # as this shell has it
    plan = UnitPlan(system=system, command=run_command(argv0 or sys.argv[0], sys.executable),
                    workdir=workdir.absolute(), environment=environment,
                    user=pwd.getpwuid(workdir.stat().st_uid).pw_name if system else None)
    try:
        text = render(plan, settings.secrets())
    except ValueError as refused:
        print(f"frontdesk service: {refused}", file=sys.stderr)
        return 2
    path = unit_path(system, environ, system_dir)
    replaced = path.exists()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        hint = " (a system unit needs root: run it with sudo)" if system else ""
        print(f"frontdesk service: cannot write {path}: {error.strerror}{hint}",
              file=sys.stderr)
        return 1
    shell_only = sorted(name for name in environ if name.startswith(SETTING_PREFIXES)
                        and name not in in_file and name not in environment)
    ctl = systemctl(system)
    said = "Replaced the unit that was" if replaced else "Wrote the unit"
    print(f"{said} at {path}.")
    print(f"It runs `{' '.join(plan.command)}` in {plan.workdir}, reading .env there; "
          "no secret is in the unit.")
    if shell_only:
        print("These settings come from your shell, not .env, so the service will not see "
              f"them (add them to {env_file}): {', '.join(shell_only)}")
    print("Start it now and at every boot:" if system else "Start it now and at every login:")
    print(f"  {ctl} daemon-reload")
    print(f"  {ctl} enable --now {SERVICE}")
    if replaced:
        print("If it runs already, restart it to use this unit:")
        print(f"  {ctl} restart {SERVICE}")
    if not system:
        print("To keep it running while you are logged out:")
        print("  sudo loginctl enable-linger $USER")
    print("Follow its log:")
    print(f"  {follow_command(system)}")
    return 0


def uninstall(*, system: bool, environ: Mapping[str, str],
              system_dir: Path = SYSTEM_UNITS) -> int:
    """Remove the unit, once it is disabled; print what to run."""
    path = unit_path(system, environ, system_dir)
    ctl = systemctl(system)
    if not path.exists():
        print(f"No Frontdesk unit at {path}: nothing to remove.")
        return 0
    if enabled_link(path, system).is_symlink():
        print(f"frontdesk service: {SERVICE} is still enabled. Stop and disable it first:\n"
              f"  {ctl} disable --now {SERVICE}\nthen run `frontdesk service uninstall"
              f"{' --system' if system else ''}` again.", file=sys.stderr)
        return 1
    try:
        path.unlink()
    except OSError as error:
        hint = " (a system unit needs root: run it with sudo)" if system else ""
        print(f"frontdesk service: cannot remove {path}: {error.strerror}{hint}",
              file=sys.stderr)
        return 1
    print(f"Removed {path}.")
    print("Then tell systemd (and stop it, if it still runs):")
    print(f"  {ctl} daemon-reload")
    print(f"  {ctl} stop {SERVICE}")
    return 0
