"""body_model: the in-process client validates each operation's body with its own model."""

from __future__ import annotations

import inspect

from detente.client.body import Body
from detente.client.calls import ServiceCalls
from detente.client.inprocess import body_model


def _operations_taking_a_body() -> list[str]:
    return [
        name
        for name, method in inspect.getmembers(ServiceCalls, inspect.isfunction)
        if not name.startswith("_") and "body" in inspect.signature(method).parameters
    ]


def test_every_operation_that_takes_a_body_has_a_request_body_model() -> None:
    operations = _operations_taking_a_body()

    assert len(operations) > 20
    for name in operations:
        model = body_model(name)
        assert model is not None, name
        assert issubclass(model, Body), name


def test_an_operation_without_a_body_has_no_model() -> None:
    assert body_model("get_claim") is None
    assert body_model("no_such_operation") is None
