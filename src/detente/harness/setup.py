"""``detente init``: plan, write and remove the harness set-up of a repository.

:func:`plan` computes every file's new bytes from what is there now (idempotent: a
second run plans no change); :func:`apply` writes them and records, in the manifest
``.detente/init.json``, each file's bytes from before detente first touched it (base64;
absent files as null) and the digest of what it wrote. :func:`remove` gives each file
back: byte for byte when it still holds what detente wrote, else with detente's
entries taken out and everything else kept (:func:`~detente.harness.config_files.unmerge_json`,
:func:`~detente.harness.config_files.without_block`).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from detente.harness import HARNESSES
from detente.harness.config_files import (
    CODEX_TOML,
    added_by_merge,
    agents_section,
    files_for,
    merge_json,
    unmerge_json,
    with_block,
    without_block,
)

#: The first line mark of a git hook detente wrote (:mod:`detente.vcs.hook_scripts`).
HOOK_MARKER = "# detente-hook"

__all__ = ["MANIFEST", "FileChange", "apply", "parse_agents", "plan", "remove"]

MANIFEST = ".detente/init.json"
_TEXT_FILES = {".codex/config.toml": False, "AGENTS.md": True, "CLAUDE.md": True}


@dataclass(frozen=True)
class FileChange:
    """One file's change.

    Attributes:
        path: repo-relative path.
        before: its bytes now (None: absent).
        after: its bytes afterwards (None: removed).
        how: ``create``, ``update``, ``unchanged``, ``restore`` (byte for byte),
            ``unmerge`` (detente's entries taken out) or ``delete``.
    """

    path: str
    before: bytes | None
    after: bytes | None
    how: str

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def to_wire(self) -> dict[str, Any]:
        return {"path": self.path, "action": self.how, "changed": self.changed}


def parse_agents(text: str | None) -> list[str]:
    """``--agents claude,codex`` as a list (default every harness).

    Raises:
        ValueError: an unknown harness name.
    """
    if not text:
        return list(HARNESSES)
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in HARNESSES]
    if unknown or not names:
        raise ValueError(
            f"unknown harness {', '.join(unknown) or '(none)'}; choose from {', '.join(HARNESSES)}"
        )
    return list(dict.fromkeys(names))


def _read(top: Path, rel: str) -> bytes | None:
    try:
        return (top / rel).read_bytes()
    except FileNotFoundError:
        return None


def _json_text(doc: Any) -> bytes:
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode()


def _desired(agents: Sequence[str]) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """JSON path -> document to merge; text path -> block body."""
    docs: dict[str, dict[str, Any]] = {}
    for harness in agents:
        for rel, doc in files_for(harness).items():
            docs[rel] = merge_json(docs.get(rel), doc)
    texts: dict[str, str] = {}
    if "codex" in agents:
        texts[".codex/config.toml"] = CODEX_TOML
    if set(agents) - {"claude"}:
        texts["AGENTS.md"] = agents_section()
    if "claude" in agents:
        texts["CLAUDE.md"] = agents_section()
    return docs, texts


def plan(top: Path, agents: Sequence[str]) -> list[FileChange]:
    """Every file ``detente init --agents ...`` would write, with its bytes before/after.

    Raises:
        ValueError: a JSON file detente merges into is not valid JSON, or its top level
            is not an object (an array, a string...): nothing is written.
    """
    docs, texts = _desired(agents)
    out: list[FileChange] = []
    for rel, doc in docs.items():
        before = _read(top, rel)
        try:
            current = json.loads(before) if before is not None and before.strip() else None
        except ValueError as exc:
            raise ValueError(
                f"{rel} is not valid JSON ({exc}); fix it, then run detente init"
            ) from None
        if current is not None and not isinstance(current, dict):
            # Merging into it would replace the person's settings with detente's.
            raise ValueError(
                f"{rel} holds a JSON {_json_kind(current)} at its top level, not an object: "
                "detente init merges its settings into an object and changes nothing else; "
                "make it an object (or move it aside), then run detente init"
            )
        merged = merge_json(current, doc)
        after = before if current is not None and merged == current else _json_text(merged)
        out.append(FileChange(rel, before, after, _how(before, after)))
    for rel, body in texts.items():
        before = _read(top, rel)
        text = before.decode("utf-8", "surrogateescape") if before is not None else None
        if rel == ".codex/config.toml" and text and _person_defines_server(text):
            out.append(FileChange(rel, before, before, "unchanged"))  # the person's own entry
            continue
        composed = with_block(text, body, markdown=_TEXT_FILES[rel])
        if rel == ".codex/config.toml" and text:
            _person_defines_server(composed, what="with detente's server added")
        after = composed.encode("utf-8", "surrogateescape")
        out.append(FileChange(rel, before, after, _how(before, after)))
    return out


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    return "null" if value is None else "number"


def _person_defines_server(text: str, *, what: str = "") -> bool:
    """Whether the TOML ``text``, outside detente's block, defines ``mcp_servers.detente``
    (in any spelling: a table, a dotted key, an inline table).

    Raises:
        ValueError: the file is not valid TOML (``what``: the state named in the error,
            such as the file with detente's block added to an inline ``mcp_servers``).
    """
    import tomllib

    try:
        doc = tomllib.loads(without_block(text, markdown=False) if not what else text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(
            f".codex/config.toml {what or 'is'} is not valid TOML ({exc}); fix it (or add "
            "[mcp_servers.detente] by hand), then run detente init"
        ) from None
    servers = doc.get("mcp_servers")
    return isinstance(servers, dict) and "detente" in servers


def _how(before: bytes | None, after: bytes | None) -> str:
    if before == after:
        return "unchanged"
    return "create" if before is None else "update"


def _load_manifest(top: Path) -> dict[str, Any]:
    raw = _read(top, MANIFEST)
    if raw is None:
        return {"version": 1, "agents": [], "files": {}}
    doc = json.loads(raw)
    return doc if isinstance(doc, dict) else {"version": 1, "agents": [], "files": {}}


def apply(
    top: Path,
    changes: Sequence[FileChange],
    agents: Sequence[str],
    outside: Mapping[str, bytes | None] | None = None,
) -> FileChange | None:
    """Write ``changes`` and update the manifest; returns the manifest's own change (None
    when nothing changed: a second run writes nothing).

    Args:
        top: the worktree.
        changes: :func:`plan`'s answer.
        agents: the harnesses set up.
        outside: files outside the worktree detente wrote (the git hook: absolute path ->
            its bytes before), recorded the first time only.
    """
    manifest = _load_manifest(top)
    files: dict[str, Any] = manifest.setdefault("files", {})
    kept: dict[str, Any] = manifest.setdefault("outside", {})
    for path, before in (outside or {}).items():
        if path not in kept:
            kept[path] = {"original": None if before is None else base64.b64encode(before).decode()}
    for change in changes:
        if not change.changed:
            continue
        entry = files.get(change.path)
        if entry is None:
            original = change.before
            entry = {"original": None if original is None else base64.b64encode(original).decode()}
        assert change.after is not None
        entry["written"] = hashlib.sha256(change.after).hexdigest()
        files[change.path] = entry
        target = top / change.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(change.after)
    manifest["agents"] = sorted(set(manifest.get("agents", [])) | set(agents))
    text = _json_text(manifest)
    before = _read(top, MANIFEST)
    if before == text:
        return None
    (top / MANIFEST).parent.mkdir(parents=True, exist_ok=True)
    (top / MANIFEST).write_bytes(text)
    return FileChange(MANIFEST, before, text, _how(before, text))


def remove(top: Path, *, dry_run: bool = False) -> list[FileChange]:
    """Give back every file the manifest names (see the module docstring), then delete
    the manifest. Nothing to do without a manifest."""
    manifest = _load_manifest(top)
    files: dict[str, Any] = manifest.get("files", {})
    docs, _ = _desired(list(HARNESSES))
    out: list[FileChange] = []
    for rel, entry in files.items():
        now = _read(top, rel)
        original = entry.get("original")
        back = None if original is None else base64.b64decode(original)
        if now is not None and hashlib.sha256(now).hexdigest() == entry.get("written"):
            out.append(FileChange(rel, now, back, "restore"))
            continue
        if now is None:
            continue
        if rel in docs:
            try:
                current = json.loads(now)
            except ValueError:
                continue
            try:
                before = json.loads(back) if back else None
            except ValueError:
                before = None
            left = unmerge_json(current, added_by_merge(before, docs[rel]))
            after: bytes | None = _json_text(left) if left else None
        else:
            kept = without_block(
                now.decode("utf-8", "surrogateescape"), markdown=_TEXT_FILES.get(rel, True)
            )
            after = kept.encode("utf-8", "surrogateescape") if kept.strip() else None
        if after is None and back is not None:
            after = b""
        out.append(FileChange(rel, now, after, "unmerge"))
    for path, entry in manifest.get("outside", {}).items():
        target = Path(path)
        now = target.read_bytes() if target.is_file() else None
        if now is None or HOOK_MARKER.encode() not in now:
            continue  # replaced by someone else since: theirs now
        original = entry.get("original")
        back = None if original is None else base64.b64decode(original)
        out.append(FileChange(path, now, back, "restore"))
    if files or _read(top, MANIFEST) is not None:
        out.append(FileChange(MANIFEST, _read(top, MANIFEST), None, "delete"))
    if dry_run:
        return out
    for change in out:
        target = top / change.path
        if change.after is None:
            if target.exists():
                target.unlink()
            _prune(top, target.parent)
        else:
            target.write_bytes(change.after)
            hook = change.path.endswith(("/pre-commit", "/post-commit"))
            if hook and Path(change.path).is_absolute():
                target.chmod(0o755)
    return out


def _prune(top: Path, directory: Path) -> None:
    """Remove the directories detente's files left empty (never ``top``)."""
    here = directory
    while here != top and top in here.parents:
        try:
            here.rmdir()
        except OSError:
            return
        here = here.parent
