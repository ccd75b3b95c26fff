"""The short forms of request-body parts that the CLI and the MCP tools share."""

from __future__ import annotations

from detente.client.seeds import memory_impacts


def test_memory_entries_naming_one_path_merge_into_one_impact_in_first_seen_order() -> None:
    entries = ["AGENTS.md#build", "NOTES.md", "AGENTS.md#test", "AGENTS.md#build"]
    assert memory_impacts(entries) == [
        {"path": "AGENTS.md", "sections": ["build", "test"]},
        {"path": "NOTES.md", "sections": []},
    ]


def test_no_memory_entries_give_no_impacts() -> None:
    assert memory_impacts([]) == []
