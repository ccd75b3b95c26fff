"""The counter of a resource (pure): migration numbers handed out exactly once."""

from __future__ import annotations

from detente.domain import events as ev
from detente.domain.policy import IdSource
from detente.domain.resources.commands import NextNumber
from detente.domain.resources.grants import event
from detente.domain.resources.model import check_resource_name, resource_id
from detente.domain.state import RepoState
from detente.errors import ValidationError

__all__ = ["MAX_NUMBER", "decide_next"]

#: The largest number a counter hands out.
MAX_NUMBER = 10**9


def decide_next(state: RepoState, cmd: NextNumber, ids: IdSource) -> list[ev.Event]:
    """``resource.number_issued``: ``max(lastNumber + 1, atLeast)``, handed out once (a
    resource not seen before is declared first, capacity 1).

    Raises:
        ValidationError: ``name``, or ``atLeast`` outside 1..:data:`MAX_NUMBER`, or the
            counter is exhausted.
    """
    name = check_resource_name(cmd.name)
    if cmd.at_least is not None and (
        isinstance(cmd.at_least, bool)
        or not isinstance(cmd.at_least, int)
        or not 1 <= cmd.at_least <= MAX_NUMBER
    ):
        raise ValidationError(f"atLeast must be an integer from 1 to {MAX_NUMBER}", field="atLeast")
    existing = state.resources.get(resource_id(state.repo, name))
    last = existing.last_number if existing is not None else 0
    number = max(last + 1, cmd.at_least or 1)
    if number > MAX_NUMBER:
        raise ValidationError(f"the counter of {name} is exhausted at {last}", field="name")
    out: list[ev.Event] = []
    if existing is None:
        out.append(event(ids, state.repo, name, ev.RESOURCE_DECLARED, capacity=1))
    out.append(event(ids, state.repo, name, ev.RESOURCE_NUMBER_ISSUED, number=number))
    return out
