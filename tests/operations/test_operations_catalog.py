"""The catalog: every operation declared once, and what every surface derives from it."""

from __future__ import annotations

from detente.operations.catalog import BY_NAME, OPERATIONS


def test_every_operation_is_declared_once_by_name_and_by_route() -> None:
    assert len(BY_NAME) == len(OPERATIONS)
    routes = {(op.method, op.path) for op in OPERATIONS}
    assert len(routes) == len(OPERATIONS)


def test_every_operation_an_http_route_is_derived_from_has_a_handler() -> None:
    for op in OPERATIONS:
        if op.http == "declared":
            assert op.handler is not None, op.name
            assert op.handler.__name__ == op.name, op.name


def test_every_operation_but_the_health_probe_names_who_may_call_it() -> None:
    for op in OPERATIONS:
        assert (op.rule is not None) == (op.name != "health"), op.name


def test_only_state_changing_operations_are_rate_limited_or_conflict() -> None:
    for op in OPERATIONS:
        if op.limit is not None or op.conflicts:
            assert op.writes, op.name
