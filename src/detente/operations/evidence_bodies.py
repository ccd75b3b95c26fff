"""Completion evidence bodies (API.md ``POST /v1/claims/{id}/complete``).

Pydantic at the edge only: each model turns itself into the pure domain value
(:mod:`detente.domain.gates.evidence`). Times are RFC 3339; a time without an offset is UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import Field

from detente.domain.gates.evidence import BaseRef, Evidence, TestRecord
from detente.operations.body import Body

__all__ = ["BaseRefIn", "EvidenceIn", "TestResultIn"]


class BaseRefIn(Body):
    """``expectedBaseRef {ref, oid}``: both required, never defaulted."""

    ref: str = Field(min_length=1, max_length=500)
    oid: str = Field(min_length=4, max_length=64)

    def to_domain(self) -> BaseRef:
        return BaseRef(ref=self.ref, oid=self.oid.strip().lower())


class TestResultIn(Body):
    """``tests[{name, status, exitCode?, recordedAt?, durationSeconds?}]``."""

    __test__ = False  # not a pytest test class

    name: str = Field(min_length=1, max_length=4000)
    status: str = Field(min_length=1, max_length=100)
    exit_code: int | None = Field(default=None, strict=True)
    recorded_at: datetime | None = None
    duration_seconds: float | None = Field(default=None, ge=0)

    def to_domain(self) -> TestRecord:
        when = self.recorded_at
        if when is not None and when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return TestRecord(
            name=self.name,
            status=self.status,
            exit_code=self.exit_code,
            recorded_at=when.astimezone(UTC) if when is not None else None,
            duration_seconds=self.duration_seconds,
        )


def _ids(items: list[Any], key: str) -> tuple[str, ...]:
    """Strings as they are; objects by their ``key`` field."""
    out: list[str] = []
    for item in items:
        value = item.get(key) if isinstance(item, dict) else item
        if value is not None and str(value) not in out:
            out.append(str(value))
    return tuple(out)


def _memory_updates(items: list[str | dict[str, Any]]) -> tuple[str, ...]:
    """``PATH``, ``PATH@REVISION`` or ``{path, revision?}``, as ``PATH[@REVISION]``."""
    out: list[str] = []
    for item in items:
        if isinstance(item, dict):
            path, revision = item.get("path"), item.get("revision")
            if path is None:
                continue
            text = f"{path}@{int(revision)}" if isinstance(revision, int) else str(path)
        else:
            text = item
        if text not in out:
            out.append(text)
    return tuple(out)


def _texts(items: list[str | dict[str, Any]], *keys: str) -> tuple[str, ...]:
    """Strings as they are; an object ``{type, area, change}`` as ``type:area:change``,
    another object as the first of ``keys`` it has."""
    out: list[str] = []
    for item in items:
        if isinstance(item, str):
            text = item
        elif {"type", "area", "change"} & set(item):
            text = ":".join(str(item[k]) for k in ("type", "area", "change") if item.get(k))
        else:
            text = next((str(item[k]) for k in keys if item.get(k)), "") or str(item)
        if text and text not in out:
            out.append(text)
    return tuple(out)


class EvidenceIn(Body):
    """``evidence {headCommit, changedFiles[], tests[], apiChanges[], migrations[],
    deployment, unresolvedRisks[], memoryUpdates[]}``; migrations may be ids or objects
    with ``id``; a memory update is ``PATH@REVISION`` (the document revision the write
    made), ``PATH``, or ``{path, revision?}``."""

    head_commit: str = Field(min_length=4, max_length=64)
    changed_files: list[str] = []
    tests: list[TestResultIn] = []
    api_changes: list[str | dict[str, Any]] = []
    migrations: list[str | dict[str, Any]] = []
    deployment: str | dict[str, Any] | None = None
    unresolved_risks: list[str | dict[str, Any]] = []
    memory_updates: list[str | dict[str, Any]] = []

    def to_domain(self) -> Evidence:
        deployment = self.deployment
        if isinstance(deployment, dict):
            deployment = deployment.get("environment") or deployment.get("env")
        return Evidence(
            head_commit=self.head_commit.strip(),
            changed_files=tuple(self.changed_files),
            tests=tuple(t.to_domain() for t in self.tests),
            api_changes=_texts(self.api_changes, "area", "description", "change"),
            migrations=_ids(self.migrations, "id"),
            deployment=str(deployment) if deployment else None,
            unresolved_risks=_texts(self.unresolved_risks, "description", "risk", "summary"),
            memory_updates=_memory_updates(self.memory_updates),
        )
