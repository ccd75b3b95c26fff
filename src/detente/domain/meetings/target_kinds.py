"""What a resolution does to each kind of target: the one rule (pure).

A meeting contests targets of six kinds: a literal path, a glob, a module, a symbol, a
contract area and a memory section. Every resolution type acts on all of them through
the claims' recorded scopes:

================  ==========================================================================
resolution        effect on every kind of target
================  ==========================================================================
split_ownership   each named claim gets its assigned targets (a path, a glob,
                  ``module:NAME``, ``path::Symbol``, ``path#section``); every other named
                  claim loses them: a glob keeps its pattern with the target carved out, a
                  module meeting the target becomes its path patterns carved the same way,
                  a symbol meeting it is given up, a memory impact loses the section
                  (:func:`~detente.domain.meetings.resolutions.split_scopes`)
handoff           the same as a split giving the recipient :func:`handed_targets` (its own
                  targets of every kind that meet the sender's scope) and the sender
                  nothing contested, applied once the recipient accepts
serialize         kind-blind: the ``then`` claim waits (``suspended``); only ``first``
                  writes what both hold (:meth:`~.resolution_types.Serialize.lets_write`)
joint             kind-blind: every member writes what the members hold
human_arbitration kind-blind: every participant is ``blocked``
================  ==========================================================================

A contract area, and a memory file claimed whole, is never carved or moved (a contract
names an interface, not a file; a whole file has no section to give): a handoff whose
only contested targets are of these kinds moves nothing and is refused; a split that
leaves two claims on one is refused
(:func:`~detente.domain.meetings.resolutions.validate`).

And whichever the type, a resolution settles the whole room: :func:`unsettled` names the
live participants it leaves contesting (a resolution that does not name them is refused,
so no claim it did not name ever gains from it).
"""

from __future__ import annotations

from collections.abc import Sequence

from detente.domain.claims.model import Claim
from detente.domain.meetings import split_named
from detente.domain.meetings.model import Decided, Meeting
from detente.domain.overlap import modules, symbols
from detente.domain.overlap.carveouts import carved_may_overlap
from detente.domain.overlap.globs import may_overlap
from detente.domain.state import RepoState
from detente.errors import ValidationError

__all__ = ["handed_targets", "is_path_target", "settles_everyone", "unsettled"]


def is_path_target(target: str) -> bool:
    """A path or glob target (not ``module:``, ``path::Symbol`` or ``path#section``)."""
    return (
        "::" not in target
        and "#" not in target
        and not target.startswith(split_named.MODULE_PREFIX)
    )


def _meets_path(sender: Claim, pattern: str) -> bool:
    if any(carved_may_overlap(p, sender.carved(p), pattern) for p in sender.paths):
        return True
    if any(modules.path_witness(m, pattern) is not None for m in sender.modules):
        return True
    return any(symbols.path_meets(pattern, s) for s in sender.symbols)


def _meets_module(sender: Claim, module: str) -> bool:
    if any(modules.meet(m, module) is not None for m in sender.modules):
        return True
    if any(modules.symbol_in(module, s) for s in sender.symbols):
        return True
    return any(
        carved_may_overlap(p, sender.carved(p), q)
        for p in sender.paths
        for q in modules.module_patterns(module)
    )


def _meets_symbol(sender: Claim, symbol: str) -> bool:
    if any(symbols.meet(s, symbol) is not None for s in sender.symbols):
        return True
    if any(modules.symbol_in(m, symbol) for m in sender.modules):
        return True
    file, _ = symbols.split_symbol(symbol)
    return any(
        symbols.path_meets(p, symbol)
        and (file is None or carved_may_overlap(p, sender.carved(p), file))
        for p in sender.paths
    )


def handed_targets(sender: Claim, recipient: Claim) -> list[str]:
    """What a handoff from ``sender`` to ``recipient`` moves: the recipient's own targets,
    of every kind, that meet the sender's scope (never the sender's broader glob or
    module: the sender keeps what nobody asked for).

    Returns:
        Split-style targets: paths and globs as they are, modules as ``module:NAME``,
        symbols as ``path::Name``, memory sections as ``path#section``.
    """
    out = [p for p in recipient.paths + recipient.pending_paths if _meets_path(sender, p)]
    out += [
        f"{split_named.MODULE_PREFIX}{m}" for m in recipient.modules if _meets_module(sender, m)
    ]
    out += [s for s in recipient.symbols if _meets_symbol(sender, s)]
    for impact in recipient.memory_impacts:
        for theirs in sender.memory_impacts:
            if not may_overlap(impact.path, theirs.path):
                continue
            out += [f"{impact.path}#{s}" for s in impact.sections if s in theirs.sections]
    return list(dict.fromkeys(out))


def unsettled(participants: Sequence[Claim], named: Sequence[str]) -> list[str]:
    """The live participants a resolution naming ``named`` leaves contesting, by id."""
    return sorted(c.id for c in participants if c.holding and c.id not in named)


def settles_everyone(state: RepoState, meeting: Meeting, decided: Decided) -> None:
    """Refuse a resolution that leaves a live participant contesting (it would gain, or
    lose, by a decision that never named it).

    Raises:
        ValidationError: ``validation_error`` (field ``resolution``) naming them and what
            they contest.
    """
    members = [state.claims[c] for c in meeting.participants if c in state.claims]
    left = unsettled(members, decided.affected)
    if not left:
        return
    contested = sorted(
        {t.target for t in meeting.contested_targets if set(t.claim_ids) & set(left)}
    )
    raise ValidationError(
        f"the resolution leaves {', '.join(left)} unsettled in meeting {meeting.id} "
        f"(contesting {', '.join(contested) or 'its targets'}): name every live "
        "participant (a split: CLAIM= to give one nothing contested), or ask for "
        "human arbitration",
        field="resolution",
        unsettled=left,
    )
