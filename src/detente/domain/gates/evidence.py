"""Completion evidence and its validation: a pure function over facts read from git.

The service reads the facts (:class:`GitFacts`) from the repository once, outside the
command path; :func:`evidence_failures` decides. Every failure is one sentence, and all of
them are returned together so ``evidence_rejected`` lists each one:

- ``expectedBaseRef.oid`` names a commit and ``headCommit`` descends from it (integration
  is a fast-forward); otherwise "wrong base OID" (a *moved* ref is not an evidence
  failure but ``stale_base``, decided at the compare-and-swap);
- ``headCommit`` is a commit, the head of the claim's branch (when the claim names one and
  the branch exists in the served repository), descends from the claim's base commit, and
  is not the base itself (nothing to integrate: abandon instead);
- ``changedFiles`` equals the real diff ``expectedBaseRef.oid..headCommit`` (no more, no
  less; a rename counts as both paths);
- every changed file lies inside the claim's granted targets and no other live claim
  holds it (unless a meeting resolution lets this claim share it); a file only the
  claim's symbols cover passes when every change in it lies inside those symbols, and a
  failure names the other symbols it changes;
- every test in the claim's ``testResponsibility`` (and, for a ``joint`` group, in every
  live member's) has a result with status ``passed``; an exit code, when given, is 0 and a
  ``recordedAt``, when given, is at or after the head commit's committer time (a bare
  ``{name, status}`` is the seed's shape and is accepted); any other listed test that
  failed, exited non-zero or predates the head commit is a failure too.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from detente.clock import format_time
from detente.domain.claims.model import Claim
from detente.domain.gates.findings import path_findings
from detente.domain.overlap.symbols import stray_edits
from detente.domain.state import RepoState

__all__ = [
    "PASSED",
    "BaseRef",
    "Evidence",
    "GitFacts",
    "TestRecord",
    "evidence_failures",
    "evidence_to_wire",
    "joint_members",
    "required_tests",
]

#: The one passing test status.
PASSED = "passed"


@dataclass(frozen=True)
class TestRecord:
    """One test result.

    Attributes:
        name: the test's name as the claim's ``testResponsibility`` lists it (the CLI uses
            the command line, e.g. ``pytest -q``).
        status: ``passed``, ``failed``, ``not_run``, ... (only ``passed`` passes).
        exit_code: the process exit status, if the test was a command.
        recorded_at: when the result was recorded (UTC), if known.
        duration_seconds: how long it ran, in seconds, if known.
    """

    __test__ = False  # not a pytest test class

    name: str
    status: str
    exit_code: int | None = None
    recorded_at: datetime | None = None
    duration_seconds: float | None = None


@dataclass(frozen=True)
class BaseRef:
    """The protected ref to advance and the OID the caller read it at."""

    ref: str
    oid: str


@dataclass(frozen=True)
class Evidence:
    """What a claim presents to complete (API.md ``evidence``).

    ``migrations`` are migration ids; ``deployment`` is the environment the claim will
    deploy to (or None); ``memory_updates`` the memory documents it updated, each by
    revision (``DECISIONS.md@17``: the revision its write made, recorded in the memory
    commit's ``Detente-Memory`` trailer) or by path alone.
    """

    head_commit: str
    changed_files: tuple[str, ...] = ()
    tests: tuple[TestRecord, ...] = ()
    api_changes: tuple[str, ...] = ()
    migrations: tuple[str, ...] = ()
    deployment: str | None = None
    unresolved_risks: tuple[str, ...] = ()
    memory_updates: tuple[str, ...] = ()


@dataclass(frozen=True)
class GitFacts:
    """What the repository says about the commits the evidence names.

    Attributes:
        head_oid: ``headCommit`` resolved to a full OID; None when it is not a commit.
        head_time: the head commit's committer time (UTC, whole seconds).
        base_oid: ``expectedBaseRef.oid`` resolved; None when it is not a commit.
        from_base: the head descends from (or is) ``base_oid``.
        from_claim_base: the head descends from (or is) the claim's base commit.
        branch_head: the tip of the claim's branch; None when the claim names no branch
            or the branch does not exist in the served repository.
        diff: paths changed between ``base_oid`` and the head, sorted.
        transient: ``(path, commit)``: a path a commit between ``base_oid`` and the head
            changed that ``diff`` does not show (a later commit undid it); judged like the
            diff, since the commit lands in the protected ref's history.
        symbol_edits: for a claim that names symbols, ``(path, innermost symbols touched,
            lines outside every symbol changed)`` per changed file (from
            :mod:`detente.index.diff`); a file the claim's paths do not cover passes when
            every change in it lies inside the claim's symbols of that file.
    """

    head_oid: str | None
    head_time: datetime | None = None
    base_oid: str | None = None
    from_base: bool = False
    from_claim_base: bool = False
    branch_head: str | None = None
    diff: tuple[str, ...] = ()
    transient: tuple[tuple[str, str], ...] = ()
    symbol_edits: tuple[tuple[str, tuple[str, ...], bool], ...] = ()


def memory_update_path(entry: str) -> str:
    """The document path of a ``memoryUpdates`` entry (``PATH@REVISION`` or ``PATH``)."""
    path, at, revision = entry.rpartition("@")
    return path if at and revision.isdigit() else entry


def _memory_failures(state: RepoState, evidence: Evidence) -> list[str]:
    """A ``PATH@REVISION`` entry must name a registered document at that revision or later."""
    failures: list[str] = []
    for entry in evidence.memory_updates:
        path = memory_update_path(entry)
        if path == entry:
            continue
        revision = int(entry.rpartition("@")[2])
        doc = state.memory.get(path)
        if doc is None:
            failures.append(f"memoryUpdates names {entry}: {path} is not a registered document")
        elif revision > doc.revision or revision < 1:
            failures.append(f"memoryUpdates names {entry}: {path} is at revision {doc.revision}")
    return failures


def evidence_to_wire(evidence: Evidence, base_ref: BaseRef | None = None) -> dict[str, Any]:
    """The camelCase evidence record stored on the claim (``tests[].recordedAt`` RFC 3339)."""
    body: dict[str, Any] = {
        "headCommit": evidence.head_commit,
        "changedFiles": list(evidence.changed_files),
        "tests": [
            {
                "name": t.name,
                "status": t.status,
                "exitCode": t.exit_code,
                "recordedAt": format_time(t.recorded_at) if t.recorded_at else None,
                "durationSeconds": t.duration_seconds,
            }
            for t in evidence.tests
        ],
        "apiChanges": list(evidence.api_changes),
        "migrations": list(evidence.migrations),
        "deployment": evidence.deployment,
        "unresolvedRisks": list(evidence.unresolved_risks),
        "memoryUpdates": list(evidence.memory_updates),
    }
    if base_ref is not None:
        body["expectedBaseRef"] = {"ref": base_ref.ref, "oid": base_ref.oid}
    return body


def joint_members(state: RepoState, claim: Claim) -> list[Claim]:
    """The other live members of ``claim``'s ``joint`` groups, sorted by id."""
    out: dict[str, Claim] = {}
    for pair, settled in state.meetings.resolved_pairs.items():
        if claim.id not in pair or not settled.resolution.couples:
            continue
        for other_id in pair - {claim.id}:
            other = state.claims.get(other_id)
            if other is not None and other.holding:
                out[other.id] = other
    return [out[k] for k in sorted(out)]


def required_tests(state: RepoState, claim: Claim) -> dict[str, str]:
    """``test name -> claim id responsible`` for the claim and its live joint members."""
    required = {name: claim.id for name in claim.test_responsibility}
    for member in joint_members(state, claim):
        for name in member.test_responsibility:
            required.setdefault(name, member.id)
    return required


def _nfc(paths: Iterable[str]) -> set[str]:
    return {unicodedata.normalize("NFC", p) for p in paths}


def evidence_failures(
    state: RepoState, claim: Claim, evidence: Evidence, base_ref: BaseRef, facts: GitFacts
) -> list[str]:
    """Every reason the evidence cannot complete ``claim`` (see the module docstring).

    Args:
        state: the repository's projection (holders, joint groups).
        claim: the completing claim.
        evidence: what it presents.
        base_ref: the ref to advance and the OID the caller expects it at.
        facts: what git says about the commits named.

    Returns:
        The failures, in a stable order; empty when the evidence is valid.
    """
    failures: list[str] = []
    head = evidence.head_commit
    if facts.base_oid is None:
        failures.append(
            f"wrong base OID: expectedBaseRef.oid {base_ref.oid} is not a commit of the repository"
        )
    if facts.head_oid is None:
        failures.append(f"headCommit {head} is not a commit of the repository")
    else:
        if facts.base_oid is not None and not facts.from_base:
            failures.append(
                f"wrong base OID: headCommit {head[:12]} does not descend from "
                f"expectedBaseRef.oid {base_ref.oid[:12]} (integration is fast-forward only: "
                "rebase onto the ref's current OID and re-collect the evidence)"
            )
        if facts.base_oid is not None and facts.head_oid == facts.base_oid:
            failures.append(
                f"headCommit {head[:12]} is expectedBaseRef.oid: no commits to integrate "
                "(abandon the claim if it needs no change)"
            )
        if not facts.from_claim_base:
            failures.append(
                f"headCommit {head[:12]} does not descend from the claim's base commit "
                f"{claim.base_commit[:12]}"
            )
        if claim.branch and facts.branch_head is not None and facts.branch_head != facts.head_oid:
            failures.append(
                f"headCommit {head[:12]} is not the head of the claim's branch {claim.branch} "
                f"({facts.branch_head[:12]})"
            )
    if facts.head_oid is not None and facts.base_oid is not None and facts.from_base:
        failures += _file_failures(state, claim, evidence, facts)
    failures += _test_failures(state, claim, evidence, facts)
    failures += _memory_failures(state, evidence)
    return failures


def _file_failures(
    state: RepoState, claim: Claim, evidence: Evidence, facts: GitFacts
) -> list[str]:
    failures: list[str] = []
    listed, real = _nfc(evidence.changed_files), _nfc(facts.diff)
    for path in sorted(real - listed):
        failures.append(f"changedFiles misses {path} (changed between the base and the head)")
    for path in sorted(listed - real):
        failures.append(f"changedFiles lists {path}, which the base..head diff does not change")
    edits = {path: (touched, bare) for path, touched, bare in facts.symbol_edits}
    for finding in path_findings(state, claim, sorted(real), edits):
        if finding.kind == "outside" and finding.path in edits:
            stray = stray_edits(claim.symbols, finding.path, *edits[finding.path])
            if stray is not None:
                if stray:
                    mine = [s for s in claim.symbols if s.startswith(finding.path + "::")]
                    failures.append(
                        f"{finding.path} changes {', '.join(stray)} outside claim "
                        f"{claim.id}'s symbols ({', '.join(mine)})"
                    )
                continue
        failures.append(finding.sentence(claim.id))
    # Every commit is judged, not only the net diff: what an intermediate commit changed
    # (then undid) lands in the protected ref's history all the same.
    first = dict(facts.transient)
    for finding in path_findings(state, claim, sorted(first), {}):
        failures.append(
            f"{finding.sentence(claim.id)} (changed by commit {first[finding.path][:12]}, "
            "though the base..head diff does not show it)"
        )
    return failures


def _test_failures(
    state: RepoState, claim: Claim, evidence: Evidence, facts: GitFacts
) -> list[str]:
    failures: list[str] = []
    by_name: dict[str, TestRecord] = {}
    for record in evidence.tests:
        by_name[record.name] = record  # the last result of a name counts
    required = required_tests(state, claim)
    for name, owner in required.items():
        if name not in by_name:
            whose = "" if owner == claim.id else f" (joint member {owner}'s responsibility)"
            failures.append(f"required test {name!r} has no result{whose}")
    for name, record in by_name.items():
        needed = name in required
        if record.status != PASSED and (needed or record.status != "not_run"):
            failures.append(f"test {name!r} has status {record.status!r}, not 'passed'")
        # ``{name, status}`` is a complete result (the seed's own shape): an exit code or a
        # recording time, when given, must agree with it; when absent nothing contradicts.
        if record.exit_code is not None and record.exit_code != 0:
            failures.append(f"test {name!r} exited with code {record.exit_code}")
        if (
            record.recorded_at is not None
            and facts.head_time is not None
            and record.recorded_at < facts.head_time
        ):
            failures.append(
                f"test {name!r} was recorded at {format_time(record.recorded_at)}, before the "
                f"head commit ({format_time(facts.head_time)}): re-run it on the head"
            )
    return failures
