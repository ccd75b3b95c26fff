"""The meeting resolutions as a tagged union of frozen dataclasses (API.md "Meetings").

One class per resolution ``type``, each with its wire shape (:meth:`to_wire`, the JSON
stored in ``meeting.proposal_added`` and ``meeting.resolved`` and shown in the meeting
record) and what it settles between the claims it names:

- :meth:`lets_write` -- may ``writer`` write what the other claim of a resolved pair holds
  (``joint`` members, the ``serialize`` ``first``, the sender of a pending ``handoff``);
- :attr:`shares_targets` -- the pair may keep overlapping targets (the overlap stays in
  reports as advisory);
- :meth:`activates` -- which affected claims go ``active`` once it is applied;
- :meth:`queue` -- a ``(first, then)`` order the fold keeps (``serialize``);
- :meth:`awaits` -- the claim whose own acceptance it still waits for (a pending handoff);
- :attr:`couples` -- the claims form one group (they share test responsibility);
- :attr:`escalates` -- applying it escalates the meeting to human arbitration.

Parsing happens once: :func:`resolution_from_wire` (stored events, the CLI's rendering)
picks the class by its ``type`` tag; the HTTP/MCP edge parses request bodies with a
pydantic discriminated union whose members build these classes. Validating a resolution
against a meeting and the claim events it implies are decisions, kept out of the fold
(:mod:`detente.domain.meetings.resolutions`, :mod:`~detente.domain.meetings.resolution_events`),
each a ``match`` over this union that mypy checks for exhaustiveness.

To add a type: a class here (listed in :data:`Resolution` and :data:`_KINDS`), its case
in ``resolutions.validate`` and ``resolution_events.apply_events``, and its body model
at the edge (``operations/resolution_bodies.py``); see docs/architecture.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import ClassVar, Literal, Self

from detente.errors import ValidationError

__all__ = [
    "RESOLUTION_TYPES",
    "Assignment",
    "Handoff",
    "HumanArbitration",
    "Joint",
    "Resolution",
    "Serialize",
    "SplitOwnership",
    "resolution_from_wire",
]


def _text(raw: Mapping[str, object], key: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str):
        raise ValidationError(f"resolution.{key} must be a claim id", field=f"resolution.{key}")
    return value


def _texts(raw: Mapping[str, object], key: str, where: str = "resolution") -> tuple[str, ...]:
    value = raw.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValidationError(f"{where}.{key} must be a list of strings", field=f"{where}.{key}")
    return tuple(str(v) for v in value)


class _Kind:
    """What every resolution says about itself; a type overrides what differs."""

    #: The pair may keep overlapping targets (the overlap stays, as advisory).
    shares_targets: ClassVar[bool] = False
    #: The claims form one group (they share test responsibility).
    couples: ClassVar[bool] = False
    #: Applying it escalates the meeting to human arbitration.
    escalates: ClassVar[bool] = False

    def affected(self, participants: Sequence[str]) -> tuple[str, ...]:
        """The claims whose acceptance it needs (``participants``: the meeting's)."""
        return tuple(participants)

    def lets_write(self, writer: str) -> bool:
        """May ``writer`` write what the other claim of a pair it settled holds?"""
        return False

    def still_shares(self) -> bool:
        """Does the pair still share what it settled (the overlap stays advisory)?
        :attr:`shares_targets`, unless applying it ended the sharing."""
        return self.shares_targets

    def activates(self, affected: Sequence[str]) -> tuple[str, ...]:
        """The ``affected`` claims that go ``active`` once it is applied."""
        return tuple(affected)

    def queue(self) -> tuple[str, str] | None:
        """``(first, then)``: ``then`` waits until ``first`` is done."""
        return None

    def awaits(self) -> str | None:
        """The claim whose own acceptance it still waits for."""
        return None

    def submitted(self) -> Self:
        """As a caller submitted it (the fields validation derives dropped)."""
        return self

    def accepted_by_all(self) -> Self:
        """Accepted by every claim it affects."""
        return self


@dataclass(frozen=True)
class Assignment:
    """One claim's share of a split: ``{claimId, targets[]}``."""

    claim_id: str
    targets: tuple[str, ...] = ()

    def to_wire(self) -> dict[str, object]:
        return {"claimId": self.claim_id, "targets": list(self.targets)}


@dataclass(frozen=True)
class SplitOwnership(_Kind):
    """``split_ownership {assignments[{claimId, targets[]}]}``: the contested targets are
    partitioned; each listed claim keeps its uncontested scope."""

    TYPE: ClassVar[Literal["split_ownership"]] = "split_ownership"

    assignments: tuple[Assignment, ...]

    @classmethod
    def from_wire(cls, raw: Mapping[str, object]) -> SplitOwnership:
        items = raw.get("assignments")
        if not isinstance(items, list):
            raise ValidationError(
                "split_ownership needs assignments[{claimId, targets[]}]",
                field="resolution.assignments",
            )
        out: list[Assignment] = []
        for i, item in enumerate(items):
            where = f"resolution.assignments[{i}]"
            if not isinstance(item, Mapping):
                raise ValidationError(f"{where} must be an object", field=where)
            claim_id = item.get("claimId")
            if not isinstance(claim_id, str):
                raise ValidationError(f"{where}.claimId must be a claim id", field=where)
            out.append(Assignment(claim_id, _texts(item, "targets", where)))
        return cls(tuple(out))

    def to_wire(self) -> dict[str, object]:
        return {"type": self.TYPE, "assignments": [a.to_wire() for a in self.assignments]}

    def affected(self, participants: Sequence[str]) -> tuple[str, ...]:
        return tuple(a.claim_id for a in self.assignments)

    def assigned(self) -> dict[str, tuple[str, ...]]:
        """``claim id -> its assigned targets``."""
        return {a.claim_id: a.targets for a in self.assignments}

    def describe(self) -> str:
        parts = [f"{a.claim_id} -> {', '.join(a.targets)}" for a in self.assignments]
        return "split: " + "; ".join(parts)


@dataclass(frozen=True)
class Serialize(_Kind):
    """``serialize {first, then}``: ``then`` waits (``suspended``) until ``first`` is
    integrated, completed or abandoned."""

    TYPE: ClassVar[Literal["serialize"]] = "serialize"
    shares_targets: ClassVar[bool] = True

    first: str
    then: str

    @classmethod
    def from_wire(cls, raw: Mapping[str, object]) -> Serialize:
        return cls(_text(raw, "first"), _text(raw, "then"))

    def to_wire(self) -> dict[str, object]:
        return {"type": self.TYPE, "first": self.first, "then": self.then}

    def affected(self, participants: Sequence[str]) -> tuple[str, ...]:
        return (self.first, self.then)

    def lets_write(self, writer: str) -> bool:
        return writer == self.first

    def activates(self, affected: Sequence[str]) -> tuple[str, ...]:
        return tuple(c for c in affected if c != self.then)

    def queue(self) -> tuple[str, str] | None:
        return (self.first, self.then)

    def describe(self) -> str:
        return f"serialize: {self.first} first, then {self.then}"


@dataclass(frozen=True)
class Handoff(_Kind):
    """``handoff {fromClaimId, toClaimId}``: the recipient's own targets of every kind
    that meet the sender's scope move to it once it accepts
    (:func:`~detente.domain.meetings.target_kinds.handed_targets`).

    ``targets`` (what moves) and ``accepted`` are derived when the handoff is validated;
    a handoff as submitted has ``targets`` None and neither is on its wire shape.
    """

    TYPE: ClassVar[Literal["handoff"]] = "handoff"
    shares_targets: ClassVar[bool] = True

    from_claim_id: str
    to_claim_id: str
    targets: tuple[str, ...] | None = None
    accepted: bool = False

    @classmethod
    def from_wire(cls, raw: Mapping[str, object]) -> Handoff:
        src, dst = _text(raw, "fromClaimId"), _text(raw, "toClaimId")
        if "targets" not in raw:
            return cls(src, dst)
        return cls(src, dst, _texts(raw, "targets"), raw.get("accepted") is True)

    def to_wire(self) -> dict[str, object]:
        out: dict[str, object] = {
            "type": self.TYPE,
            "fromClaimId": self.from_claim_id,
            "toClaimId": self.to_claim_id,
        }
        if self.targets is not None:
            out["targets"] = list(self.targets)
            out["accepted"] = self.accepted
        return out

    def affected(self, participants: Sequence[str]) -> tuple[str, ...]:
        return (self.from_claim_id, self.to_claim_id)

    def lets_write(self, writer: str) -> bool:
        return not self.accepted and writer == self.from_claim_id

    def still_shares(self) -> bool:
        # Accepted, the targets moved and the sender carved them out: nothing is shared,
        # so a later overlap of the pair (a scope grown into the other's) is contested.
        return not self.accepted

    def activates(self, affected: Sequence[str]) -> tuple[str, ...]:
        return tuple(c for c in affected if self.accepted or c != self.to_claim_id)

    def awaits(self) -> str | None:
        return None if self.accepted else self.to_claim_id

    def submitted(self) -> Handoff:
        return Handoff(self.from_claim_id, self.to_claim_id)

    def accepted_by_all(self) -> Handoff:
        return replace(self, accepted=True)

    def describe(self) -> str:
        moved = ", ".join(self.targets or ()) or "its overlapping targets"
        state = "accepted" if self.accepted else "awaiting the recipient's acceptance"
        return f"handoff: {self.from_claim_id} -> {self.to_claim_id} ({moved}; {state})"


@dataclass(frozen=True)
class Joint(_Kind):
    """``joint {claimIds[]}``: one coupled group sharing the contested targets."""

    TYPE: ClassVar[Literal["joint"]] = "joint"
    couples: ClassVar[bool] = True
    shares_targets: ClassVar[bool] = True

    claim_ids: tuple[str, ...]

    @classmethod
    def from_wire(cls, raw: Mapping[str, object]) -> Joint:
        return cls(_texts(raw, "claimIds"))

    def to_wire(self) -> dict[str, object]:
        return {"type": self.TYPE, "claimIds": list(self.claim_ids)}

    def affected(self, participants: Sequence[str]) -> tuple[str, ...]:
        return tuple(sorted(set(self.claim_ids)))

    def lets_write(self, writer: str) -> bool:
        return True

    def describe(self) -> str:
        return "joint: " + ", ".join(self.claim_ids)


@dataclass(frozen=True)
class HumanArbitration(_Kind):
    """``human_arbitration {}``: the meeting escalates; participants are ``blocked`` until
    an arbitrator resolves with one of the other types."""

    TYPE: ClassVar[Literal["human_arbitration"]] = "human_arbitration"
    escalates: ClassVar[bool] = True

    @classmethod
    def from_wire(cls, raw: Mapping[str, object]) -> HumanArbitration:
        return cls()

    def to_wire(self) -> dict[str, object]:
        return {"type": self.TYPE}

    def activates(self, affected: Sequence[str]) -> tuple[str, ...]:
        return ()

    def describe(self) -> str:
        return "human arbitration"


#: A meeting resolution: one of the API.md types.
Resolution = SplitOwnership | Serialize | Handoff | Joint | HumanArbitration

_KINDS: dict[str, type[Resolution]] = {
    kind.TYPE: kind for kind in (SplitOwnership, Serialize, Handoff, Joint, HumanArbitration)
}

#: The resolution ``type`` names, in the order a meeting offers them.
RESOLUTION_TYPES: tuple[str, ...] = tuple(_KINDS)


def resolution_from_wire(raw: object) -> Resolution:
    """The resolution a ``{type, ...}`` JSON object spells (stored or submitted shape;
    the fields :class:`~detente.domain.meetings.model.Decided` adds are ignored here).

    Raises:
        ValidationError: ``validation_error`` naming ``resolution.type`` (not an object,
            or an unknown type) or the malformed field.
    """
    kind = _KINDS.get(str(raw.get("type"))) if isinstance(raw, Mapping) else None
    if kind is None or not isinstance(raw, Mapping):
        raise ValidationError(
            f"resolution.type must be one of {', '.join(RESOLUTION_TYPES)}", field="resolution.type"
        )
    return kind.from_wire(raw)
