"""CODEOWNERS: who arbitrates a contested path.

GitHub semantics (docs.github.com, "About code owners"): the file is looked up at
``.github/CODEOWNERS``, then ``CODEOWNERS``, then ``docs/CODEOWNERS`` (the first found
wins); for a path, the LAST matching line decides its owners; ``docs/*`` matches files
directly in ``docs/`` only; ``config/`` matches a ``config`` directory anywhere. GitHub
does not support ``!`` negation or ``[ ]`` character ranges: such lines are reported as
invalid and ignored, never guessed at. Matching itself is the ``codeowners`` package's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from codeowners import CodeOwners

LOCATIONS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")


@dataclass(frozen=True)
class Ownership:
    """Parsed CODEOWNERS rules.

    Attributes:
        source: repo-relative path of the file read, or None when there is none.
        invalid_lines: ``"<source>:<line>: <why>"`` for each ignored line.
    """

    source: str | None
    invalid_lines: list[str] = field(default_factory=list)
    _rules: CodeOwners | None = None

    def owners(self, path: str) -> list[str]:
        """Owners (``@user``, ``@org/team``, emails) of one repo-relative path."""
        if self._rules is None:
            return []
        return [name for _, name in self._rules.of(path)]

    def owners_of(self, paths: Sequence[str]) -> tuple[list[str], list[str]]:
        """Owners of any of ``paths`` (in order of first appearance) and the invalid lines."""
        seen: dict[str, None] = {}
        for path in paths:
            for owner in self.owners(path):
                seen.setdefault(owner, None)
        return list(seen), list(self.invalid_lines)


def parse(text: str, source: str = "CODEOWNERS") -> Ownership:
    """Parse CODEOWNERS text, dropping (and reporting) lines GitHub would not accept."""
    kept: list[str] = []
    invalid: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            kept.append("")
            continue
        pattern = line.split()[0]
        why = None
        if pattern.startswith("!"):
            why = "negation with '!' is not supported by GitHub CODEOWNERS"
        elif "[" in pattern or "]" in pattern:
            why = "character ranges with '[ ]' are not supported by GitHub CODEOWNERS"
        if why is not None:
            invalid.append(f"{source}:{number}: {line!r}: {why}")
            kept.append("")
            continue
        kept.append(line)
    try:
        rules = CodeOwners("\n".join(kept))
    except ValueError as exc:
        return Ownership(source, [*invalid, f"{source}: {exc}"], None)
    return Ownership(source, invalid, rules)


def load(repo: Path | None) -> Ownership:
    """The repository's CODEOWNERS from its working tree (empty when absent)."""
    if repo is None:
        return Ownership(None)
    for location in LOCATIONS:
        candidate = repo / location
        if candidate.is_file():
            return parse(candidate.read_text(encoding="utf-8", errors="replace"), location)
    return Ownership(None)
