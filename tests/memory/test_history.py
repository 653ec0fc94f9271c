"""Chat history: oldest-first tail, and search scoped to one chat."""

from __future__ import annotations

from memory.notes import Memory


def test_history_is_the_last_lines_oldest_first(memory: Memory) -> None:
    for n in range(5):
        memory.add_history("telegram:chat:1", "user" if n % 2 == 0 else "assistant", f"line {n}")
    assert memory.history("telegram:chat:1", 3) == [
        ("user", "line 2"), ("assistant", "line 3"), ("user", "line 4")]
    assert memory.history("telegram:chat:2") == []


def test_history_search_stays_in_its_chat(memory: Memory) -> None:
    memory.add_history("telegram:chat:1", "user", "the parcel arrives on Monday")
    memory.add_history("discord:chat:5", "user", "my parcel is lost")
    [hit] = memory.search_history("telegram:chat:1", "parcel")
    assert hit.text == "the parcel arrives on Monday"
    assert [h.text for h in memory.search_history("discord:chat:5", "parcel")] == [
        "my parcel is lost"]


def test_history_and_notes_do_not_mix(memory: Memory) -> None:
    memory.add_history("owner", "user", "history about zebras")
    assert memory.search("owner", "zebras") == []
    memory.add("owner", "note about zebras")
    assert [h.text for h in memory.search_history("owner", "zebras")] == ["history about zebras"]
