"""`frontdesk chat --attach PATH [TEXT] [--json]` (a real subprocess) and the console's
``/attach PATH [caption]``, through the same path as a chat platform's files; and a guest's
file staying in the guest's own chat and scope."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from bot.adapters.console import ConsoleAdapter, console_message, file_attachment, run_console
from bot.app import assemble
from tests.support.child_process import clean_env
from tests.support.files import pdf_with_text, photo
from tests.support.telegram_bot import settings_for


def frontdesk(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    clean = clean_env(FRONTDESK_HOME=str(home), FRONTDESK_TIMEZONE="UTC")
    return subprocess.run([sys.executable, "-m", "bot.cli.main", *args], env=clean,
                          capture_output=True, text=True, timeout=60, check=False)


def test_chat_attach_json_sends_a_file_and_its_caption(tmp_path: Path) -> None:
    pdf = tmp_path / "boarding pass.pdf"
    pdf.write_bytes(pdf_with_text(["Flight OS 123 boards at 07:40, gate C4"]))
    done = frontdesk(tmp_path / "home", "chat", "--attach", str(pdf), "remember this",
                     "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert list(result) == ["reply", "route", "run_id", "model_calls", "buttons"]
    assert result["route"] == "full_agent"
    assert "Flight OS 123 boards at 07:40, gate C4" in result["reply"]
    recalled = json.loads(frontdesk(tmp_path / "home", "chat", "when does flight OS 123 board?",
                                    "--json").stdout)
    assert "07:40" in recalled["reply"]


def test_chat_attach_a_photo_without_text_and_a_missing_file(tmp_path: Path) -> None:
    picture = tmp_path / "cat.png"
    picture.write_bytes(photo(50, 50, "PNG"))
    done = frontdesk(tmp_path / "home", "chat", "--attach", str(picture))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("I can't look at images in offline mode.")
    missing = frontdesk(tmp_path / "home", "chat", "--attach", str(tmp_path / "nope.pdf"))
    assert missing.returncode == 2 and "there is no file at" in missing.stderr
    assert "Traceback" not in missing.stderr
    nothing = frontdesk(tmp_path / "home", "chat")
    assert nothing.returncode == 2 and "--attach PATH" in nothing.stderr


async def test_the_console_attach_command(tmp_path: Path) -> None:
    notes = tmp_path / "my list.txt"
    notes.write_text("oat milk\nrye bread\n", encoding="utf-8")
    settings = settings_for(tmp_path / "home")
    gateway = assemble(settings).chat.gateway
    await gateway.start()
    typed = io.StringIO(f'/attach "{notes}" remember this\n/attach {tmp_path}/none.txt\n'
                        "/attach\nexit\n")
    out = io.StringIO()
    await run_console(gateway, settings.home, typed, out)
    shown = out.getvalue()
    assert "Saved to your notes: this\n\n[Document my list.txt (text), its text:]\noat milk" \
        in shown
    assert f"Can't attach that: there is no file at {tmp_path}/none.txt." in shown
    assert "Usage: /attach PATH [caption]" in shown


async def test_a_guests_file_stays_in_the_guests_chat_and_scope(tmp_path: Path) -> None:
    services = assemble(settings_for(tmp_path / "home"))
    gateway = services.chat.gateway
    await gateway.start()
    await gateway.attach(ConsoleAdapter(echo=False), recover=False)
    secret = tmp_path / "secret.txt"
    secret.write_text("the guest's locker code is 5521", encoding="utf-8")
    reply = await gateway.handle(console_message("remember this", "ann",
                                                 (file_attachment(str(secret)),)))
    assert reply is not None and "5521" in reply.text
    owner_history = services.memory.history("console:chat:console", 10)
    assert all("5521" not in text for _, text in owner_history)
    assert any("5521" in text for _, text in services.memory.history("console:chat:guest:ann",
                                                                     10))
    assert [n.text for n in services.memory.search("owner", "locker", 5)] == []
    assert any("5521" in n.text for n in services.memory.search("console:ann", "locker", 5))
