"""`frontdesk service install|uninstall`: a unit systemd accepts, with no secret in it.

The unit is checked by the real ``systemd-analyze verify`` (offline: no running systemd is
needed); a user unit goes where ``XDG_CONFIG_HOME`` says, a system unit into a stand-in for
/etc passed to ``install`` (never the real /etc).
"""

from __future__ import annotations

import pwd
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli.main import build_parser
from bot.cli.service import install, uninstall
from bot.config.settings import Settings
from bot.service.unit import TIMEOUT_STOP_S, UnitPlan, exec_line, render, run_command
from tests.service.systemd_tools import verify
from tests.support.child_process import clean_env

FRONTDESK = Path(sys.executable).parent / "frontdesk"  # the console script of this venv
SECRETS = {"TELEGRAM_BOT_TOKEN": "123456:AAH-telegram-secret-token",
           "DISCORD_BOT_TOKEN": "MTIz.discord-secret-token.xyz",
           "OPENAI_API_KEY": "sk-openai-secret-key-0001",
           "ANTHROPIC_API_KEY": "sk-ant-secret-key-0002"}


def workdir_with_env(tmp_path: Path, extra: str = "") -> Path:
    """A directory with a .env full of secrets, as `frontdesk setup` leaves it."""
    work = tmp_path / "my bot"  # a space: the unit must quote it
    work.mkdir()
    lines = [f'{name}="{value}"' for name, value in SECRETS.items()]
    (work / ".env").write_text("\n".join([*lines, "TELEGRAM_OWNER_ID=42", extra]) + "\n")
    return work


def frontdesk(work: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(FRONTDESK), *args], cwd=work, env=clean_env("XDG_", **env),
                          capture_output=True, text=True, timeout=60)


def test_the_default_is_a_user_unit() -> None:
    parser = build_parser()
    assert parser.parse_args(["service", "install"]).system is False
    assert parser.parse_args(["service", "uninstall", "--user"]).system is False
    assert parser.parse_args(["service", "install", "--system"]).system is True


def test_user_unit_round_trip_verified_and_free_of_secrets(tmp_path: Path) -> None:
    work = workdir_with_env(tmp_path)
    config, home = tmp_path / "config", tmp_path / "data home"
    shell = {"XDG_CONFIG_HOME": str(config), "FRONTDESK_HOME": str(home),
             "FRONTDESK_BRIEF_AT": "08:00"}  # set in the shell only, not in .env
    done = frontdesk(work, "service", "install", "--user", **shell)
    assert done.returncode == 0, done.stderr
    unit = config / "systemd" / "user" / "frontdesk.service"
    text = unit.read_text()
    assert not any(secret in text or secret in done.stdout + done.stderr
                   for secret in SECRETS.values())
    assert f"ExecStart={FRONTDESK} run\n" in text
    assert f"WorkingDirectory={work}/\n" in text
    assert f'Environment="FRONTDESK_HOME={home}"\n' in text  # not in .env: pinned
    assert "EnvironmentFile" not in text and "BRIEF_AT" not in text
    for line in ("Type=notify", "Restart=on-failure", f"TimeoutStopSec={TIMEOUT_STOP_S}",
                 "RestartPreventExitStatus=2", "WantedBy=default.target"):
        assert f"{line}\n" in text
    checked = verify(unit, user=True, runtime_dir=tmp_path / "run")
    assert checked.returncode == 0 and "frontdesk.service" not in checked.stderr, checked.stderr
    out = done.stdout
    assert "Wrote the unit" in out and str(unit) in out
    assert "systemctl --user daemon-reload" in out
    assert "systemctl --user enable --now frontdesk" in out
    assert "journalctl --user-unit frontdesk -f" in out
    assert "not .env" in out and "FRONTDESK_BRIEF_AT" in out  # named, so it can be moved

    again = frontdesk(work, "service", "install", "--user", **shell)
    assert again.returncode == 0 and "Replaced the unit" in again.stdout
    assert "systemctl --user restart frontdesk" in again.stdout
    assert unit.read_text() == text

    gone = frontdesk(work, "service", "uninstall", "--user", **shell)
    assert gone.returncode == 0, gone.stderr
    assert not unit.exists() and "Removed" in gone.stdout
    assert "systemctl --user daemon-reload" in gone.stdout
    nothing = frontdesk(work, "service", "uninstall", "--user", **shell)
    assert nothing.returncode == 0 and "nothing to remove" in nothing.stdout


def test_uninstall_refuses_while_enabled(tmp_path: Path) -> None:
    work = workdir_with_env(tmp_path)
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "FRONTDESK_HOME": str(tmp_path / "h")}
    assert frontdesk(work, "service", "install", "--user", **env).returncode == 0
    unit = tmp_path / "config" / "systemd" / "user" / "frontdesk.service"
    wants = unit.parent / "default.target.wants"
    wants.mkdir()
    (wants / "frontdesk.service").symlink_to(unit)  # what `systemctl --user enable` makes
    refused = frontdesk(work, "service", "uninstall", "--user", **env)
    assert refused.returncode == 1 and unit.exists()
    assert "systemctl --user disable --now frontdesk" in refused.stderr
    (wants / "frontdesk.service").unlink()
    assert frontdesk(work, "service", "uninstall", "--user", **env).returncode == 0
    assert not unit.exists()


def test_system_unit_verified_in_a_stand_in_for_etc(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    work = workdir_with_env(tmp_path, "FRONTDESK_HOME=/srv/frontdesk")
    settings = Settings.from_env({**SECRETS, "FRONTDESK_HOME": "/srv/frontdesk"})
    etc = tmp_path / "etc-systemd-system"
    assert install(settings, system=True, workdir=work, environ={}, system_dir=etc,
                   argv0=str(FRONTDESK)) == 0
    unit = etc / "frontdesk.service"
    text = unit.read_text()
    assert not any(secret in text for secret in SECRETS.values())
    assert "FRONTDESK_HOME" not in text  # in .env: read from there, not pinned twice
    assert f"User={pwd.getpwuid(work.stat().st_uid).pw_name}\n" in text  # who owns the data
    assert "WantedBy=multi-user.target\n" in text
    checked = verify(unit, user=False, runtime_dir=tmp_path / "run")
    assert checked.returncode == 0 and "frontdesk.service" not in checked.stderr, checked.stderr
    out = capsys.readouterr().out
    assert "journalctl -u frontdesk -f" in out and "enable --now frontdesk" in out
    assert "loginctl" not in out
    assert uninstall(system=True, environ={}, system_dir=etc) == 0 and not unit.exists()


def test_a_directory_without_a_token_in_env_is_refused(tmp_path: Path) -> None:
    work = tmp_path / "empty"
    work.mkdir()
    config = tmp_path / "config"
    done = frontdesk(work, "service", "install", "--user", XDG_CONFIG_HOME=str(config),
                     FRONTDESK_HOME=str(tmp_path / "h"),
                     TELEGRAM_BOT_TOKEN=SECRETS["TELEGRAM_BOT_TOKEN"])  # shell only
    assert done.returncode == 2 and not config.exists()
    [line] = done.stderr.splitlines()
    assert "no TELEGRAM_BOT_TOKEN or DISCORD_BOT_TOKEN in" in line and "frontdesk setup" in line
    assert SECRETS["TELEGRAM_BOT_TOKEN"] not in done.stderr


def test_a_secret_never_reaches_the_unit_text() -> None:
    secret = SECRETS["OPENAI_API_KEY"]
    plan = UnitPlan(system=False, command=run_command("x", sys.executable),
                    workdir=Path(f"/srv/{secret}"))
    with pytest.raises(ValueError, match="secret"):
        render(plan, [secret])


def test_odd_paths_are_quoted_so_systemd_reads_them_back(tmp_path: Path) -> None:
    odd = tmp_path / "dir 100% $HOME"
    odd.mkdir()
    script = odd / "frontdesk"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    plan = UnitPlan(system=True, command=run_command(str(script), sys.executable),
                    workdir=odd, environment={"FRONTDESK_HOME": str(odd / "home")})
    unit = tmp_path / "frontdesk.service"
    unit.write_text(render(plan, []))
    checked = verify(unit, user=False, runtime_dir=tmp_path / "run")
    assert checked.returncode == 0 and "frontdesk.service" not in checked.stderr, checked.stderr
    missing = tmp_path / "broken" / "frontdesk.service"  # the check has teeth
    missing.parent.mkdir()
    missing.write_text(render(UnitPlan(system=True, command=["/no/such/frontdesk", "run"],
                                       workdir=odd), []))
    assert verify(missing, user=False, runtime_dir=tmp_path / "run").returncode != 0
    with pytest.raises(ValueError, match="plainer path"):  # systemd would refuse to run it
        exec_line([str(tmp_path / 'a "quoted" dir' / "frontdesk"), "run"])
