"""The chaos bench's harness runs: 2 chats, 1 SIGKILL, every message answered, no note twice."""

from __future__ import annotations

from pathlib import Path

from bench.chaos import ChaosConfig, run_chaos


def test_a_small_chaos_run_answers_every_message_and_saves_each_note_once(
        tmp_path: Path) -> None:
    config = ChaosConfig(chats=2, messages_per_chat=3, kills=1, seed=5, window=4.0,
                         catch_up=30.0, settle=1.0)
    result = run_chaos(config, tmp_path)
    assert {m.chat.platform for m in result.messages} == {"telegram", "discord"}
    assert len(result.downtimes) == 1 and result.starts == 2
    never = [m.text for m in result.messages if not m.answers]
    assert never == [], f"never answered: {never}\nbot log:\n{result.log_tail}"
    assert result.doubled_notes() == {}
    remembered = [m.text.removeprefix("remember that ") for m in result.messages
                  if m.kind == "remember"]
    assert remembered and all(result.notes[text] == 1 for text in remembered)
