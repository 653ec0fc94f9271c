"""The prompts ship inside the package, and FRONTDESK_HOME/prompts/<name>.txt replaces one."""

from __future__ import annotations

from pathlib import Path

from bot.app import assemble
from bot.config.prompt_files import PROMPTS_DIR, load_prompts
from bot.config.settings import Settings

# What the workflows read: triage, the agent loop and the content workflow.
USED = {"classify", "quick_reply", "agent", "loop", "draft", "revise", "check_tone",
        "check_facts"}


def test_every_prompt_the_workflows_read_ships_in_the_package() -> None:
    assert (PROMPTS_DIR / "classify.txt").is_file()
    prompts = load_prompts()
    assert set(prompts) >= USED
    assert all(text and text == text.strip() for text in prompts.values())


def test_a_file_in_the_override_folder_replaces_the_shipped_prompt(tmp_path: Path) -> None:
    shipped = load_prompts()
    (tmp_path / "quick_reply.txt").write_text("  Answer like a pirate.\n", encoding="utf-8")
    (tmp_path / "notes.md").write_text("not a prompt", encoding="utf-8")
    prompts = load_prompts(tmp_path)
    assert prompts["quick_reply"] == "Answer like a pirate."
    assert {k: v for k, v in prompts.items() if k != "quick_reply"} == \
        {k: v for k, v in shipped.items() if k != "quick_reply"}
    assert load_prompts(tmp_path / "missing") == shipped


async def test_the_assembled_app_reads_the_home_prompts_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "prompts").mkdir(parents=True)
    (home / "prompts" / "loop.txt").write_text("Be brief.", encoding="utf-8")
    app = assemble(Settings.from_env({"FRONTDESK_HOME": str(home), "FRONTDESK_TIMEZONE": "UTC"}))
    try:
        assert app.flows.prompts["loop"] == "Be brief."
        assert app.flows.prompts["classify"] == load_prompts()["classify"]
    finally:
        await app.close()
