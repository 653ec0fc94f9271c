"""The built wheel, installed into a fresh venv, answers a chat and serves the dashboard.

This is what ``pipx install .`` and ``uv tool install .`` do: build a wheel, install it into a
venv of its own, put ``frontdesk`` on the PATH. The wheel is built with ``python -m build`` from
a copy of the working tree (so no ``build/`` or ``*.egg-info`` lands in the clone), installed
into a fresh venv with uv when it is on the machine (as ``uv tool install`` does, and as the
Makefile does: seconds instead of the minute pip takes to resolve and unpack every dependency
again), else with that venv's own pip, from the configured registry and the installer's cache.
Both read the same wheel metadata, so a dependency missing from ``pyproject.toml`` fails
either way. It then runs from an empty folder with no ``.env``: anything it reads at run time
must be in the package.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.support.child_process import clean_env
from tests.support.polling import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # a cold pip cache is slow

ROOT = Path(__file__).resolve().parents[2]
# What the clone holds that is not source: never copied into the build folder.
NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.egg-info", ".*_cache",
                                    "site", "build", "dist", "test-artifacts", "*.db", "*.db-*",
                                    ".env")
RUN_TIME_FILES = ("bot/config/prompts/classify.txt", "bot/config/prompts/loop.txt",
                  "bot/config/prices.toml", "bot/dashboard/static/runs.html",
                  "bot/dashboard/static/dashboard.css", "bot/evaluation/sample.jsonl")


@dataclass(frozen=True)
class Installed:
    """The built wheel and the fresh venv it was installed into."""

    wheel: Path
    venv: Path

    def env(self, home: Path) -> dict[str, str]:
        """A clean environment: offline model, no tokens, the venv's bin first on the PATH."""
        clean = clean_env("TZ", "PYTHON", "VIRTUAL_ENV")
        path = f"{self.venv / 'bin'}{os.pathsep}{clean.get('PATH', '')}"
        return {**clean, "PATH": path, "FRONTDESK_HOME": str(home),
                "FRONTDESK_MODEL_PROVIDER": "offline", "FRONTDESK_TIMEZONE": "UTC"}


def run(*command: str | Path, timeout: float = 300, cwd: Path | None = None,
        env: dict[str, str] | None = None) -> str:
    """Run a step that must succeed; its output is shown when it fails."""
    done = subprocess.run([str(part) for part in command], capture_output=True, text=True,
                          timeout=timeout, check=False, cwd=cwd, env=env)
    assert done.returncode == 0, f"{command}: {done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    """Build the wheel from a copy of the tree and install it into a fresh venv (once)."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE)
    run(sys.executable, "-m", "build", "--wheel", "--outdir", work / "dist", source)
    (wheel,) = (work / "dist").glob("frontdesk-*.whl")
    venv = work / "venv"
    uv = shutil.which("uv")
    if uv is not None:
        run(uv, "venv", "--quiet", "--seed", "--python", sys.executable, venv)
        run(uv, "pip", "install", "--quiet", "--python", venv / "bin" / "python", wheel,
            timeout=600)
    else:
        run(sys.executable, "-m", "venv", venv)
        run(venv / "bin" / "python", "-m", "pip", "install", "--disable-pip-version-check",
            wheel, timeout=600)
    yield Installed(wheel, venv)


def test_the_wheel_holds_what_is_read_at_run_time(installed: Installed) -> None:
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    assert [name for name in RUN_TIME_FILES if name not in names] == []


def test_a_chat_from_the_installed_wheel(installed: Installed, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"  # no .env, no clone: only the package
    elsewhere.mkdir()
    env = installed.env(tmp_path / "home")
    where = run(installed.venv / "bin" / "python", "-c", "import bot; print(bot.__file__)",
                cwd=elsewhere, env=env)
    assert where.startswith(str(installed.venv)), where  # the installed copy, not the clone
    done = subprocess.run(["frontdesk", "chat", "hello", "--json"], cwd=elsewhere, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    result = json.loads(done.stdout)
    assert result["route"] == "quick_reply"
    assert "Hello" in result["reply"]
    assert (tmp_path / "home" / "frontdesk.db").is_file()


def test_eval_of_the_sample_from_the_installed_wheel(installed: Installed,
                                                     tmp_path: Path) -> None:
    env = installed.env(tmp_path / "home")
    done = subprocess.run(["frontdesk", "eval", "--sample", "--offline", "--json"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    assert figures["n"] >= 150 and figures["calls"] == 0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def get_when_up(url: str, server: subprocess.Popen[str], deadline: float) -> httpx.Response:
    """GET ``url`` once ``server`` listens, polling until ``deadline`` (or until it exits)."""
    def answered() -> httpx.Response | None:
        try:
            return httpx.get(url, timeout=5)
        except httpx.TransportError:
            assert server.poll() is None, f"the dashboard exited: {server.communicate()[1]}"
            return None

    return wait_until(answered, deadline - time.monotonic(), what=url, interval=0.1)


def test_the_dashboard_from_the_installed_wheel(installed: Installed, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    port = free_port()
    server = subprocess.Popen(["frontdesk", "dashboard", "--port", str(port)], cwd=elsewhere,
                              env=installed.env(tmp_path / "home"), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        refused = get_when_up(f"http://127.0.0.1:{port}/", server, time.monotonic() + 60)
        assert refused.status_code == 401  # a token by default, made at its first start
        token = (tmp_path / "home" / "dashboard-token").read_text(encoding="utf-8").strip()
        bearer = {"Authorization": f"Bearer {token}"}
        page = httpx.get(f"http://127.0.0.1:{port}/", headers=bearer, timeout=5)
        assert page.status_code == 200 and "<html" in page.text.lower()
        style = httpx.get(f"http://127.0.0.1:{port}/static/dashboard.css", headers=bearer,
                          timeout=5)
        assert style.status_code == 200 and style.text.strip()
        assert server.poll() is None
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    assert "Traceback" not in err, err
