"""The ``resolution`` of a proposal or a human resolution, parsed once at the edge.

A pydantic discriminated union on ``type`` (API.md "Meetings"), one body model per
resolution type, each turning itself into its domain class
(:mod:`detente.domain.meetings.resolution_types`). Unknown fields are refused; a field's
error names it as ``resolution.<field>`` (the union's tag is left out of the location)
and an unknown or missing ``type`` names ``resolution.type``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

import pydantic
from pydantic import Field, WrapValidator

from detente.domain.meetings.resolution_types import (
    Assignment,
    Handoff,
    HumanArbitration,
    Joint,
    Serialize,
    SplitOwnership,
)
from detente.operations.body import Body

__all__ = ["ResolutionIn"]


class AssignmentIn(Body):
    """``{claimId, targets[]}``: targets may be memory sections ``path#section``."""

    claim_id: str
    targets: list[str]


class SplitOwnershipIn(Body):
    """``split_ownership {assignments[{claimId, targets[]}]}``."""

    type: Literal["split_ownership"]
    assignments: list[AssignmentIn]

    def to_domain(self) -> SplitOwnership:
        return SplitOwnership(
            tuple(Assignment(a.claim_id, tuple(a.targets)) for a in self.assignments)
        )


class SerializeIn(Body):
    """``serialize {first, then}``: ``then`` waits until ``first`` is done."""

    type: Literal["serialize"]
    first: str
    then: str

    def to_domain(self) -> Serialize:
        return Serialize(self.first, self.then)


class HandoffIn(Body):
    """``handoff {fromClaimId, toClaimId}``: the recipient must accept."""

    type: Literal["handoff"]
    from_claim_id: str
    to_claim_id: str

    def to_domain(self) -> Handoff:
        return Handoff(self.from_claim_id, self.to_claim_id)


class JointIn(Body):
    """``joint {claimIds[]}``: one group sharing the contested targets."""

    type: Literal["joint"]
    claim_ids: list[str]

    def to_domain(self) -> Joint:
        return Joint(tuple(self.claim_ids))


class HumanArbitrationIn(Body):
    """``human_arbitration {}``: escalate to the CODEOWNERS arbitrators."""

    type: Literal["human_arbitration"]

    def to_domain(self) -> HumanArbitration:
        return HumanArbitration()


_TAG_ERRORS = frozenset({"union_tag_invalid", "union_tag_not_found"})


def _spelled(loc: Sequence[str | int]) -> tuple[str, ...]:
    """``("assignments", 0, "targets")`` as ``("assignments[0]", "targets")``, the way the
    domain's refusals name a field."""
    out: list[str] = []
    for part in loc:
        if isinstance(part, int) and out:
            out[-1] += f"[{part}]"
        else:
            out.append(str(part))
    return tuple(out)


def _untagged(value: Any, handler: pydantic.ValidatorFunctionWrapHandler) -> Any:
    """Locations without the union's tag: ``resolution.then``, not
    ``resolution.serialize.then``; a bad ``type`` is ``resolution.type``; list items as
    ``assignments[0]``."""
    try:
        return handler(value)
    except pydantic.ValidationError as exc:
        errors: list[Any] = []
        # A misspelt field is named first: its "missing" twin follows from it.
        for e in sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden"):
            loc = ("type",) if e["type"] in _TAG_ERRORS else _spelled(e["loc"][1:])
            errors.append(
                {"type": e["type"], "loc": loc, "input": e["input"], "ctx": e.get("ctx", {})}
            )
        raise pydantic.ValidationError.from_exception_data(exc.title, errors) from None


_Union = SplitOwnershipIn | SerializeIn | HandoffIn | JointIn | HumanArbitrationIn

#: A submitted resolution: ``.to_domain()`` is its domain
#: :data:`~detente.domain.meetings.resolution_types.Resolution`.
ResolutionIn = Annotated[_Union, Field(discriminator="type"), WrapValidator(_untagged)]
