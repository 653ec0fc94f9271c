"""The labelled set: JSON Lines read strictly (one error naming the line), and the sample that
ships in the package."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from bot.evaluation.labelled import ROUTES, LabelError, Labelled, read_labelled, sample


def test_a_set_is_read_with_guest_by_default_extra_keys_ignored_blank_lines_skipped(
        tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text('{"text": "hi", "route": "quick_reply", "note": "mine"}\n'
                    "\n"
                    '{"text": "fire!", "route": "notify_now", "sender": "guest"}\n'
                    '{"text": "agenda?", "route": "full_agent", "sender": "owner"}\n',
                    encoding="utf-8")
    assert read_labelled(path) == [
        Labelled(1, "hi", "quick_reply", "guest"),
        Labelled(3, "fire!", "notify_now", "guest"),
        Labelled(4, "agenda?", "full_agent", "owner")]


@pytest.mark.parametrize(("line", "says"), [
    ('{"text": "hi", "route": "quick_reply"', "not JSON"),
    ('["hi", "quick_reply"]', "not a JSON object"),
    ('{"route": "quick_reply"}', '"text" must be a non-empty string'),
    ('{"text": "  ", "route": "quick_reply"}', '"text" must be a non-empty string'),
    ('{"text": "hi", "route": "reply"}', "\"route\" must be one of quick_reply, full_agent, "
                                         "notify_now (got 'reply')"),
    ('{"text": "hi", "route": "full_agent", "sender": "boss"}', '"sender" must be owner or '
                                                               "guest (got 'boss')"),
])
def test_a_malformed_line_is_one_error_naming_its_number(tmp_path: Path, line: str,
                                                          says: str) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text('{"text": "hi", "route": "quick_reply"}\n\n' + line + "\n"
                    '{"text": "also bad", "route": 3}\n', encoding="utf-8")
    with pytest.raises(LabelError) as error:
        read_labelled(path)
    assert str(error.value).startswith(f"{path}, line 3: {says}")


def test_a_missing_or_empty_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(LabelError, match="no such file"):
        read_labelled(tmp_path / "nope.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n\n")
    with pytest.raises(LabelError, match="no messages in it"):
        read_labelled(tmp_path / "empty.jsonl")


def test_the_sample_ships_150_varied_messages_balanced_over_the_routes() -> None:
    messages = sample()
    assert len(messages) >= 150
    routes = Counter(m.route for m in messages)
    assert set(routes) == set(ROUTES) and min(routes.values()) >= 45
    assert {m.sender for m in messages} == {"owner", "guest"}
    # someone else's urgent message is what notify_now is for: the owner's goes to the agent
    assert all(m.sender == "guest" for m in messages if m.route == "notify_now")
    assert any(m.sender == "owner" and "urgent" in m.text.lower() for m in messages
               if m.route == "full_agent")
    texts = [m.text for m in messages]
    assert len(set(texts)) == len(texts)
    assert any(not text.isascii() for text in texts)  # other languages, emoji
    assert any(len(text) > 250 for text in texts)  # long ones too
