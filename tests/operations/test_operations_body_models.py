"""Each operation's body model is its handler's ``body`` annotation: the in-process
transport validates a body with the model the HTTP route declares."""

from __future__ import annotations

import inspect

from detente.operations.body import Body
from detente.operations.catalog import BY_NAME, OPERATIONS


def _operations_taking_a_body() -> list[str]:
    return [
        op.name
        for op in OPERATIONS
        if op.handler is not None and "body" in inspect.signature(op.handler).parameters
    ]


def test_every_operation_that_takes_a_body_has_a_request_body_model() -> None:
    operations = _operations_taking_a_body()

    assert len(operations) > 20
    for name in operations:
        model = BY_NAME[name].body_model()
        assert model is not None, name
        assert issubclass(model, Body), name


def test_an_operation_without_a_body_has_no_model() -> None:
    assert BY_NAME["get_claim"].body_model() is None
    assert BY_NAME["event_stream"].body_model() is None


def test_every_write_but_the_clean_up_and_the_merge_check_takes_a_body_and_no_read_does() -> None:
    # Both act on the claim the path names with nothing to say: git has the facts.
    bodiless = {"cleanup", "merge_check"}
    for op in OPERATIONS:
        takes_one = op.body_model() is not None
        assert takes_one == (op.writes and op.name not in bodiless), op.name
