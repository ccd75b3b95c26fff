"""The dashboard's search box: lexical ranking over claims and memory sections.

Semantic ranking needs the semantic index (not built yet); until it exists every query is
ranked lexically: a record scores one point per query term found (case-insensitive
substring) in its objective, targets, modules, symbols, contract areas, or, for a memory
section, its document path, key and title. Ties keep the newest claim first. The caller
shows each claim hit with its symbolic overlaps beside it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = ["MAX_HITS", "search", "terms"]

Wire = dict[str, Any]

#: Results shown per kind.
MAX_HITS = 20


def terms(query: str) -> list[str]:
    """Lower-cased query terms: words, paths and globs split on whitespace and quotes."""
    return [t for t in re.split(r"[\s\"',;]+", query.lower()) if t]


def _score(words: list[str], fields: Iterable[str]) -> tuple[int, list[str]]:
    text = [f.lower() for f in fields if f]
    matched = [w for w in words if any(w in f for f in text)]
    return len(matched), matched


def search(query: str, claims: Iterable[Wire], documents: Iterable[Wire]) -> dict[str, Any]:
    """Rank claims and memory sections against ``query``.

    Args:
        query: free text (``retry behaviour``, ``auth contract``, ``src/app``).
        claims: claim records (API.md).
        documents: memory document records.

    Returns:
        ``{mode: "lexical", terms[], claims[{claim, score, matched[]}],
        sections[{document, section, score, matched[]}]}``, best first, at most
        :data:`MAX_HITS` of each.
    """
    words = terms(query)
    found: list[Wire] = []
    sections: list[Wire] = []
    if words:
        for claim in claims:
            fields = [
                claim["objective"],
                claim["id"],
                claim["agent"].get("name", ""),
                *claim["paths"],
                *claim.get("pendingPaths", []),
                *claim["modules"],
                *claim["symbols"],
                *claim["expectedContractChanges"],
            ]
            score, matched = _score(words, fields)
            if score:
                found.append({"claim": claim, "score": score, "matched": matched})
        for doc in documents:
            for section in doc.get("sections", []):
                fields = [doc["path"], section["key"], section.get("title") or ""]
                score, matched = _score(words, fields)
                if score:
                    sections.append(
                        {"document": doc, "section": section, "score": score, "matched": matched}
                    )
    found.sort(key=lambda h: str(h["claim"]["createdAt"]), reverse=True)
    found.sort(key=lambda h: -h["score"])
    sections.sort(key=lambda h: -h["score"])
    return {
        "mode": "lexical",
        "terms": words,
        "claims": found[:MAX_HITS],
        "sections": sections[:MAX_HITS],
    }
