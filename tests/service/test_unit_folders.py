"""`frontdesk service install` from a folder whose name systemd could read differently: a
trailing backslash (which would join the next unit line on), a trailing space or tab (which
systemd strips), or a name no unit line can hold (refused, naming it, exit 2).

Each unit is checked by the real ``systemd-analyze verify``, and read back the way
systemd.syntax says a unit file is read (``read_as_systemd``): verify alone cannot see a
folder that lost its trailing space, since the shorter path is a valid one too.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.service.systemd_tools import verify
from tests.support.child_process import clean_env

FRONTDESK = Path(sys.executable).parent / "frontdesk"


def install_from(work: Path | bytes, config: Path) -> subprocess.CompletedProcess[str]:
    """``frontdesk service install --user`` run in ``work``, as a user would."""
    env = clean_env("XDG_", XDG_CONFIG_HOME=str(config))
    return subprocess.run([str(FRONTDESK), "service", "install", "--user"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=60)


def with_env(work: Path | bytes, home: Path) -> None:
    """``work`` made, with a .env as `frontdesk setup` leaves it (the home a plain folder)."""
    os.makedirs(work)
    env_file = os.path.join(work, b".env" if isinstance(work, bytes) else ".env")
    with open(env_file, "w", encoding="utf-8") as out:
        out.write('TELEGRAM_BOT_TOKEN="123456:AAH-secret"\nTELEGRAM_OWNER_ID=42\n'
                  f"FRONTDESK_HOME={home}\n")


def read_as_systemd(text: str) -> dict[str, list[str]]:
    """Each setting's values as systemd.syntax reads a unit: a line ending in an odd run of
    backslashes goes on with the next (the backslash read as a space), comment and section
    lines are skipped, and key and value are stripped of surrounding whitespace."""
    settings: dict[str, list[str]] = {}
    pending = ""
    for line in text.split("\n"):
        line = pending + line
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2:
            pending = line[:-1] + " "
            continue
        pending = ""
        stripped = line.strip()
        if not stripped or stripped[0] in "#;[":
            continue
        key, _, value = stripped.partition("=")
        settings.setdefault(key.strip(), []).append(value.strip())
    return settings


def simplified(path: str) -> str:
    """The path as systemd keeps it: ``%%`` is ``%``, repeated and trailing slashes dropped."""
    return re.sub("/+", "/", path.replace("%%", "%")).rstrip("/") or "/"


@pytest.mark.parametrize("name", ["bot\\", "bot\\\\", "my bot ", " bot  ", "100% \\ bot \\"])
def test_a_folder_name_systemd_would_read_differently_comes_back_whole(
        tmp_path: Path, name: str) -> None:
    work = tmp_path / name
    with_env(work, tmp_path / "home")
    config = tmp_path / "config"
    done = install_from(work, config)
    assert done.returncode == 0, done.stderr
    unit = config / "systemd" / "user" / "frontdesk.service"
    checked = verify(unit, user=True, runtime_dir=tmp_path / "run")
    assert checked.returncode == 0 and "frontdesk.service" not in checked.stderr, checked.stderr
    settings = read_as_systemd(unit.read_text())
    assert [simplified(value) for value in settings["WorkingDirectory"]] == [str(work)]
    assert settings["ExecStart"] == [f"{FRONTDESK} run"]  # the next line is its own
    assert settings["Type"] == ["notify"]


@pytest.mark.parametrize("name", [b"bad\x1bname", b"tab\tbell\x07", b"latin\xe9"])
def test_a_folder_no_unit_line_can_hold_is_refused_naming_it(
        tmp_path: Path, name: bytes) -> None:
    work = os.fsencode(tmp_path) + b"/" + name
    with_env(work, tmp_path / "home")
    config = tmp_path / "config"
    done = install_from(work, config)
    assert done.returncode == 2, done.stdout
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("frontdesk service: a unit file cannot hold ")
    assert repr(os.fsdecode(work)) in done.stderr  # the folder, its odd bytes spelt out
    assert not any(char in done.stderr for char in "\x1b\x07")
    assert not (config / "systemd" / "user" / "frontdesk.service").exists()
