"""Patches, deployments and the git hooks' checks (API.md "Deployments and patches")."""

from __future__ import annotations

from typing import Literal, NotRequired

from typing_extensions import TypedDict

from detente.operations.wire.agents import Notice, Receipts
from detente.operations.wire.claims import Claim
from detente.operations.wire.record import Json, Time, record

__all__ = [
    "CommitCheck",
    "DeploymentView",
    "EditCheck",
    "EditOption",
    "Environment",
    "Patch",
    "PatchList",
    "PatchOut",
    "PathFinding",
    "PushChecked",
    "PushRecorded",
]


@record
class Patch(TypedDict):
    """A content-addressed patch artifact (``id`` from the SHA-256 of repo and content);
    ``mbox`` (the ``git format-patch`` text) only from ``GET /v1/patches/{id}``."""

    id: str
    repo: str
    claimId: str
    baseCommit: str
    format: Literal["mbox"]
    sha256: str
    size: int
    files: list[str]
    commits: int
    status: Literal["published", "integrated", "discarded"]
    reason: str | None
    revision: int
    createdAt: Time
    updatedAt: Time
    lastEventId: str | None
    mbox: NotRequired[str]


@record
class PatchOut(TypedDict):
    """``{patch}``; when publishing, ``created`` is false for content already published."""

    patch: Patch
    created: NotRequired[bool]


@record
class PatchList(TypedDict):
    """``{patches[]}`` (without the mbox)."""

    patches: list[Patch]


@record
class Environment(TypedDict):
    """A deployment environment: its ``current`` deployment, ``policy`` and how many
    ``deployments`` it has seen."""

    id: str
    repo: str
    environment: str
    revision: int
    current: dict[str, Json] | None
    policy: dict[str, Json] | None
    deployments: int
    createdAt: Time
    updatedAt: Time
    lastEventId: str | None


@record
class DeploymentView(TypedDict):
    """``{deployment, history[], environment, policy}``: ``deployment`` (``{claimId,
    commitOid, prevCommitOid, migrations, ..., environment, repo}``) and ``environment``
    are null before the first deployment; ``policy`` is the effective policy."""

    deployment: dict[str, Json] | None
    history: list[dict[str, Json]]
    environment: Environment | None
    policy: dict[str, Json]


@record
class PushChecked(TypedDict):
    """The push to ``ref`` integrates valid claims (``commits`` checked)."""

    ok: bool
    ref: str
    commits: int


@record
class PushRecorded(TypedDict):
    """The ``ready_for_review`` claims the landed push integrated."""

    integrated: list[str]


@record
class PathFinding(TypedDict):
    """A staged path the claim may not commit: ``held`` by another live claim (its id and
    agent) or ``outside`` the claim's targets."""

    path: str
    kind: str
    claimId: str | None
    agent: str | None


@record
class CommitCheck(TypedDict):
    """The ``pre-commit`` guard's answer (never a refusal: the hook decides)."""

    ok: bool
    claimId: str | None
    problems: list[str]
    findings: list[PathFinding]
    reasons: list[str]


@record
class EditOption(TypedDict):
    """A ready-to-run next step after an edit check: ``settle``, ``wait``, ``split``,
    ``handoff``, ``claim`` or ``elsewhere`` (``command`` None: nothing to run)."""

    action: str
    command: str | None


@record
class EditCheck(TypedDict):
    """The whole judgement of an edit (``POST /v1/hooks/edit-check``): ``deny`` when a
    file is held by another live claim or the session's claim may not write now; the
    claim the session works under (None: none), the pre-commit check, the holders'
    records (objective, agent, lease), the open meeting rooms the claim shares with them,
    the files no claim holds (the caller's ``[harness] unclaimed`` policy decides those),
    whether the symbols the edit touches could change the answer (send ``edits``), and
    the options; and the session's notices (what woke it since they were last delivered:
    its claim's turn came, a room of its claims changed) with its receipts."""

    decision: Literal["allow", "deny"]
    claim: Claim | None
    check: CommitCheck
    holders: list[Claim]
    rooms: list[str]
    unclaimed: list[str]
    symbolsMatter: bool
    options: list[EditOption]
    notices: list[Notice]
    scannedUpTo: int
    receipts: Receipts | None
