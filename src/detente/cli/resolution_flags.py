"""The resolution flags of ``detente meeting propose`` and ``meeting resolve``.

They are exactly what :func:`detente.cli.views.negotiation_options` prints, and
:func:`build_resolution` turns them into the API's resolution object::

    --split CLAIM=[TARGET,...]         (repeatable)   split_ownership
    --serialize --first CLAIM --then CLAIM             serialize
    --handoff --from CLAIM --to CLAIM                  handoff
    --join CLAIM,CLAIM[,...]   (alias --joint)         joint
    --escalate                                         human_arbitration
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

import typer

__all__ = [
    "EscalateOpt",
    "FirstOpt",
    "FromOpt",
    "HandoffOpt",
    "JoinOpt",
    "ResolutionFlags",
    "SerializeOpt",
    "SplitOpt",
    "ThenOpt",
    "ToOpt",
    "build_resolution",
]

SplitOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--split",
        metavar="CLAIM=TARGET[,TARGET...]",
        help=(
            "split_ownership: CLAIM gets these contested targets and keeps its uncontested "
            "scope, with the others' targets carved out of its globs; CLAIM= (empty) gets "
            "none of the contested ones (repeat per claim)."
        ),
    ),
]
SerializeOpt = Annotated[
    bool, typer.Option("--serialize", help="serialize: --first works, --then waits (suspended).")
]
FirstOpt = Annotated[
    str | None, typer.Option("--first", metavar="CLAIM", help="serialize: goes first.")
]
ThenOpt = Annotated[
    str | None, typer.Option("--then", metavar="CLAIM", help="serialize: waits for --first.")
]
HandoffOpt = Annotated[
    bool, typer.Option("--handoff", help="handoff: --from's contested targets move to --to.")
]
FromOpt = Annotated[
    str | None, typer.Option("--from", metavar="CLAIM", help="handoff: the sender.")
]
ToOpt = Annotated[
    str | None, typer.Option("--to", metavar="CLAIM", help="handoff: the recipient (accepts).")
]
JoinOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--join",
        "--joint",
        metavar="CLAIM,CLAIM[,...]",
        help="joint: these claims share the contested targets.",
    ),
]
EscalateOpt = Annotated[
    bool, typer.Option("--escalate", help="human_arbitration: block everyone until a human.")
]


def _ids(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


#: The flags in :func:`build_resolution`'s order: split, serialize, first, then, handoff,
#: from, to, join, escalate.
ResolutionFlags = tuple[
    Sequence[str], bool, str | None, str | None, bool, str | None, str | None, Sequence[str], bool
]


def build_resolution(
    split: Sequence[str] = (),
    serialize: bool = False,
    first: str | None = None,
    then: str | None = None,
    handoff: bool = False,
    from_claim: str | None = None,
    to_claim: str | None = None,
    join: Sequence[str] = (),
    escalate: bool = False,
) -> dict[str, Any]:
    """The resolution object the flags describe (exactly one kind must be chosen).

    ``--first``/``--then`` imply ``--serialize`` and ``--from``/``--to`` imply
    ``--handoff``; ``--split`` entries naming the same claim are merged.

    Raises:
        ValidationError: ``validation_error`` (exit 2) naming the flag at fault.
    """
    from detente.domain.meetings import resolution_types as r
    from detente.errors import ValidationError

    chosen = [
        kind
        for kind, given in (
            ("--split", bool(split)),
            ("--serialize", serialize or first is not None or then is not None),
            ("--handoff", handoff or from_claim is not None or to_claim is not None),
            ("--join", bool(join)),
            ("--escalate", escalate),
        )
        if given
    ]
    if len(chosen) != 1:
        raise ValidationError(
            "choose exactly one resolution: --split CLAIM=TARGET[,TARGET...] (repeatable), "
            "--serialize --first CLAIM --then CLAIM, --handoff --from CLAIM --to CLAIM, "
            "--join CLAIM,CLAIM[,...] or --escalate"
            + (f" (got {', '.join(chosen)})" if chosen else ""),
            field="resolution",
        )
    kind = chosen[0]
    if kind == "--split":
        assignments: dict[str, list[str]] = {}
        for entry in split:
            claim_id, sep, targets = entry.partition("=")
            claim_id = claim_id.strip()
            if not sep or not claim_id:
                raise ValidationError(
                    f"--split takes CLAIM=TARGET[,TARGET...], got {entry!r}", field="split"
                )
            merged = assignments.setdefault(claim_id, [])
            merged.extend(t for t in _ids(targets) if t not in merged)
        return r.SplitOwnership(
            tuple(r.Assignment(c, tuple(t)) for c, t in assignments.items())
        ).to_wire()
    if kind == "--serialize":
        for name, value in (("first", first), ("then", then)):
            if not value:
                raise ValidationError(
                    "--serialize needs --first CLAIM and --then CLAIM", field=name
                )
        assert first is not None and then is not None
        return r.Serialize(first, then).to_wire()
    if kind == "--handoff":
        for name, value in (("from", from_claim), ("to", to_claim)):
            if not value:
                raise ValidationError("--handoff needs --from CLAIM and --to CLAIM", field=name)
        assert from_claim is not None and to_claim is not None
        return r.Handoff(from_claim, to_claim).to_wire()
    if kind == "--join":
        members = list(dict.fromkeys(c for entry in join for c in _ids(entry)))
        if len(members) < 2:
            raise ValidationError("--join needs at least two claims: CLAIM,CLAIM", field="join")
        return r.Joint(tuple(members)).to_wire()
    return r.HumanArbitration().to_wire()
