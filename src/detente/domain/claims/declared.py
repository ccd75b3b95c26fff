"""Declared facts: optional text a claim states when it opens and carries unchanged.

A declared fact (today the ``deploymentResponsibility`` environment) is not a target:
overlap analysis never reads it, and only the code that acts on its meaning (the
integration and deployment gates for the environment) looks at it. Every fact is one
field of :class:`Declared` and one member of :class:`DeclaredRecord`, both here; the
command (:class:`~detente.domain.claims.commands.OpenClaim`), the claim
(:class:`~detente.domain.claims.model.Claim`), the ``claim.announced`` event, the wire
record (:func:`~detente.domain.claims.record.claim_to_wire`), the seed mapping
(:func:`~detente.operations.claim_command.open_command`) and the body a client builds
(:func:`~detente.client.seeds.claim_seed`) carry the whole record, so a new fact touches
this module, the request model ``ClaimIn`` and the adapter that asks for it.

Field metadata: ``wire`` is the camelCase name on the wire and in events; ``identifier``
says the text is a name (no tab, newline or format character, see
:func:`~detente.domain.validation.text_field`) rather than free text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, TypedDict, cast

if TYPE_CHECKING:
    from detente.domain.policy import Policy

__all__ = [
    "NO_FACTS",
    "WIRE_NAMES",
    "Declared",
    "DeclaredRecord",
    "declared_from_wire",
    "declared_to_wire",
    "validate_declared",
]


def _fact(wire: str, *, identifier: bool) -> dict[str, Any]:
    return {"wire": wire, "identifier": identifier}


@dataclass(frozen=True, slots=True)
class Declared:
    """The optional facts a claim declares (None: not declared)."""

    #: The environment whose deployment completes the claim after integration.
    deployment_responsibility: str | None = field(
        default=None, metadata=_fact("deploymentResponsibility", identifier=True)
    )


class DeclaredRecord(TypedDict):
    """The facts on the wire: one camelCase member per field of :class:`Declared`."""

    deploymentResponsibility: str | None


#: ``(attribute, wire name, identifier)`` of every fact, in declaration order.
_FACTS: tuple[tuple[str, str, bool], ...] = tuple(
    (f.name, str(f.metadata["wire"]), bool(f.metadata["identifier"])) for f in fields(Declared)
)
#: The wire names of the facts (the seed fields :mod:`detente.operations.claim_command` maps).
WIRE_NAMES = frozenset(wire for _, wire, _ in _FACTS)
#: A claim that declares nothing.
NO_FACTS = Declared()


def declared_to_wire(facts: Declared) -> DeclaredRecord:
    """The facts as their wire members (every member present, None when not declared)."""
    return cast(DeclaredRecord, {wire: getattr(facts, name) for name, wire, _ in _FACTS})


def declared_from_wire(data: Mapping[str, Any]) -> Declared:
    """The facts of a seed, an event's data or a wire record (absent members: None)."""
    if not any(data.get(wire) is not None for _, wire, _ in _FACTS):
        return NO_FACTS
    return Declared(**{name: data.get(wire) for name, wire, _ in _FACTS})


def validate_declared(facts: Declared, policy: Policy) -> Declared:
    """Each declared text checked by the one text rule, stripped.

    Raises:
        ValidationError: ``validation_error`` naming the fact's wire name (not a text,
            a control or format character, longer than ``policy.max_text``).
    """
    from detente.domain.validation import text_field
    from detente.errors import ValidationError

    checked: dict[str, str] = {}
    for name, wire, identifier in _FACTS:
        value = getattr(facts, name)
        if value is None:
            continue
        if not isinstance(value, str):
            raise ValidationError(f"{wire} must be a string", field=wire)
        checked[name] = text_field(value, wire, policy, required=False, identifier=identifier)
    return replace(facts, **checked) if checked else facts
