"""Request bodies of the memory operations (API.md "Memory documents", plus write, append,
render, reconcile): pydantic, camelCase on the wire, unknown fields refused."""

from __future__ import annotations

from pydantic import Field, field_validator, model_validator

from detente.domain.memory import commands as mc
from detente.domain.text_rules import section_key_problem
from detente.operations.body import Body

__all__ = ["AppendIn", "ReconcileIn", "RegisterIn", "RenderIn", "SectionPatchIn", "WriteIn"]

_HEX = frozenset("0123456789abcdef")

#: What ``expectedFileHash`` looks like (documented in the OpenAPI schema; checked by
#: :func:`_file_hash`, whose refusal says why).
FILE_HASH_PATTERN = "^[0-9a-f]{64}$"


def _file_hash(value: str) -> str:
    """``expectedFileHash`` is a hash detente gave out: SHA-256 as 64 lower-case hex digits
    (``domain.memory.markdown.digest``); anything else names no version of the file."""
    if len(value) != 64 or not set(value) <= _HEX:
        raise ValueError(
            f"expectedFileHash must be a SHA-256 of the file as 64 lower-case hex digits "
            f"(the fileHash detente reported), got {value[:80]!r}"
        )
    return value


class RegisterIn(Body):
    """``POST /v1/memory/documents``."""

    repo: str = Field(min_length=1)
    path: str = Field(min_length=1, max_length=1000)
    doc_class: str = Field(alias="class")

    def to_command(self) -> mc.Register:
        return mc.Register(self.repo, self.path, self.doc_class)


class PatchBody(Body):
    """Exactly one of ``body`` (the section's new body) or ``diff`` (a unified diff)."""

    body: str | None = Field(default=None, max_length=mc.MAX_DOC_BYTES)
    diff: str | None = Field(default=None, max_length=mc.MAX_DOC_BYTES)

    @model_validator(mode="after")
    def _one_of(self) -> PatchBody:
        if (self.body is None) == (self.diff is None):
            raise ValueError("patch needs exactly one of body or diff")
        return self


class SectionPatchIn(Body):
    """``POST /v1/memory/sections/patch``."""

    repo: str = Field(min_length=1)
    path: str = Field(min_length=1, max_length=1000)
    section_key: str = Field(min_length=1, max_length=200)
    expected_section_revision: int = Field(strict=True, ge=0)
    expected_file_hash: str = Field(
        min_length=1, max_length=200, json_schema_extra={"pattern": FILE_HASH_PATTERN}
    )
    claim_id: str = Field(min_length=1)
    fencing_token: int = Field(strict=True, ge=0)
    worktree: str | None = None
    patch: PatchBody

    _hash = field_validator("expected_file_hash")(_file_hash)

    @field_validator("section_key")
    @classmethod
    def _one_key_rule(cls, key: str) -> str:
        # checked before the document is looked up: the same rule as memoryImpacts
        problem = section_key_problem(key)
        if problem is not None:
            raise ValueError(f"section key {key!r} {problem}")
        return key

    def to_command(self) -> mc.PatchSection:
        return mc.PatchSection(
            **self.fields(exclude=["patch"], body=self.patch.body, diff=self.patch.diff)
        )


class WriteIn(Body):
    """``POST /v1/memory/documents/write``."""

    repo: str = Field(min_length=1)
    path: str = Field(min_length=1, max_length=1000)
    expected_revision: int = Field(strict=True, ge=0)
    expected_file_hash: str = Field(
        min_length=1, max_length=200, json_schema_extra={"pattern": FILE_HASH_PATTERN}
    )
    claim_id: str = Field(min_length=1)
    fencing_token: int = Field(strict=True, ge=0)
    content: str = Field(max_length=mc.MAX_DOC_BYTES)
    worktree: str | None = None

    _hash = field_validator("expected_file_hash")(_file_hash)

    def to_command(self) -> mc.WriteFile:
        return mc.WriteFile(**self.fields())


class AppendIn(Body):
    """``POST /v1/memory/append``."""

    repo: str = Field(min_length=1)
    path: str = Field(min_length=1, max_length=1000)
    claim_id: str = Field(min_length=1)
    fencing_token: int = Field(strict=True, ge=0)
    entry: str = Field(min_length=1, max_length=mc.MAX_ENTRY_BYTES)
    worktree: str | None = None

    def to_command(self) -> mc.Append:
        return mc.Append(**self.fields())


class RenderIn(Body):
    """``POST /v1/memory/render``: one document (``path``) or every generated one."""

    repo: str = Field(min_length=1)
    path: str | None = None
    worktree: str | None = None

    def to_command(self) -> mc.Render:
        return mc.Render(self.repo, self.path, self.worktree)


class ReconcileIn(Body):
    """``POST /v1/memory/reconcile``."""

    repo: str = Field(min_length=1)
    path: str = Field(min_length=1, max_length=1000)
    decision: str
    reconciliation_id: str | None = None
    region_key: str | None = None
    expected_revision: int | None = Field(default=None, strict=True)
    worktree: str | None = None

    def to_command(self) -> mc.Reconcile:
        return mc.Reconcile(**self.fields())
