"""``schemathesis`` against ``/openapi.json``: no 5xx and no answer outside the schema.

Bounded for CI: a few generated cases per operation (``max_examples``), no shrinking
beyond Hypothesis' defaults, well under a minute in total.
"""

from __future__ import annotations

from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.schemas import APIOperation
from schemathesis.specs.openapi.checks import (
    allow_header_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from detente.api.app import create_app
from detente.clock import FakeClock
from detente.security.hosts import HostPolicy
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore

from support import counting_ids


def api_schema(tmp_path: Path) -> schemathesis.BaseSchema:
    service = Service(
        SqliteStore(tmp_path / "d.db"), FakeClock(), [RepoConfig("demo")], ids=counting_ids()
    )
    # schemathesis's ASGI client addresses the app as "testserver".
    app = create_app(service, hosts=HostPolicy(extra_names=frozenset({"testserver"})))
    # The event stream never ends by design (tests/api/test_api_events.py covers it).
    return schemathesis.openapi.from_asgi("/openapi.json", app).exclude(path="/v1/events/stream")


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    allow_header_conformance,
]


def answers_within_schema(operation: APIOperation) -> None:
    """Raise the first finding of a few generated requests to ``operation``."""

    @given(case=operation.as_strategy())
    @settings(
        max_examples=5,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    def check(case: schemathesis.Case) -> None:
        case.call_and_validate(checks=CHECKS)

    check()


def test_the_api_answers_every_generated_request_within_its_schema(tmp_path: Path) -> None:
    # The bar: no 5xx, and every answer (status, media type, headers, body) is
    # one the document describes. Business refusals of schema-valid input (an unknown
    # repo is a 422) are the API's contract, not a finding. The operations are walked
    # here rather than through schemathesis' pytest plugin, which pytest 9.2 broke
    # ("'Function' object has no attribute '_nodeid'").
    schema = api_schema(tmp_path)
    findings: dict[str, str] = {}
    checked = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        checked += 1
        try:
            answers_within_schema(operation)
        except Exception as exc:
            findings[operation.label] = f"{type(exc).__name__}: {exc}"[:2000]

    assert checked >= 40, f"only {checked} operations in the document"
    assert findings == {}
