"""Any user text is safe in MATCH: results or nothing, never an SQLite error."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.notes import Memory
from memory.query import MAX_TERMS, query_terms
from memory.schema import MIGRATIONS
from sqlitedb.database import Database

HOSTILE = [
    '"', '""', '"unbalanced', "it's", "a AND", "AND", "OR OR", "NOT coffee", "NEAR(a b)",
    "NEAR", "coffee*", "*", "^coffee", "^", "text:coffee", "scope:owner", "text : coffee",
    "(", ")", "(coffee", "coffee)", "{text}: coffee", "-coffee", "+", "coffee -milk", "",
    "   ", "\t\n", "😀", "☕ coffee", "coffee 😀 milk", "\x00", "\ud800", "'; DROP TABLE x; --",
    "a" * 5000, "coffee " * 20_000, "x" * 100_000, "é" * 100_000,
]


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    db = Database(Path(tmp_path_factory.mktemp("hostile")) / "f.db", migrations=MIGRATIONS)
    memory = Memory(db)
    memory.add_many("owner", ["coffee and milk", "NEAR the station", "it's a text: coffee",
                              "AND OR NOT are words too", "☕ emoji coffee"])
    memory.add_history("owner", "user", "coffee chat")
    yield memory
    db.close()


@pytest.mark.parametrize("query", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_query_returns_a_list(shared: Memory, query: str) -> None:
    assert isinstance(shared.search("owner", query), list)
    assert isinstance(shared.search_history("owner", query), list)


def test_operators_are_searched_as_words(shared: Memory) -> None:
    assert [h.text for h in shared.search("owner", "NEAR")] == ["NEAR the station"]
    assert shared.search("owner", "AND OR NOT")[0].text == "AND OR NOT are words too"
    assert [h.text for h in shared.search("owner", "text:coffee")] == ["it's a text: coffee"]


def test_a_100_kb_query_still_finds(shared: Memory) -> None:
    hits = shared.search("owner", "coffee " + "zzz " * 25_000)
    assert "coffee and milk" in {h.text for h in hits}


def test_terms_are_quoted_deduplicated_and_capped() -> None:
    assert query_terms('say "hi" NOT') == ['"say"', '"""hi"""', '"NOT"']
    assert query_terms("Coffee coffee COFFEE") == ['"Coffee"']
    assert query_terms("😀 *** ^ ( )") == []
    assert len(query_terms(" ".join(f"w{n}" for n in range(1000)))) == MAX_TERMS


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec=None, exclude_categories=[]), max_size=200))
def test_any_text_is_safe(shared: Memory, query: str) -> None:
    hits = shared.search("owner", query)
    assert all(hit.id > 0 for hit in hits)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(['"', "AND", "OR", "NOT", "NEAR", "*", "^", ":", "(", ")",
                                 "{", "}", "+", "-", "coffee", "milk", "text", " ", "NEAR(",
                                 ",", "'", "\\", "\x00", "😀"]), max_size=30).map("".join))
def test_fts5_syntax_soup_is_safe(shared: Memory, query: str) -> None:
    assert isinstance(shared.search("owner", query), list)
