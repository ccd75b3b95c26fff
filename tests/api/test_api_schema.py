"""``schemathesis`` against ``/openapi.json``: no 5xx and no answer outside the schema.

Bounded for CI: a few generated cases per operation (``max_examples``), no shrinking
beyond Hypothesis' defaults, well under a minute in total.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    allow_header_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from detente.api.app import create_app
from detente.clock import FakeClock
from detente.service import RepoConfig, Service
from detente.storage.sqlite import SqliteStore

from support import counting_ids


@pytest.fixture
def api_schema(tmp_path: Path) -> schemathesis.BaseSchema:
    service = Service(
        SqliteStore(tmp_path / "d.db"), FakeClock(), [RepoConfig("demo")], ids=counting_ids()
    )
    return schemathesis.openapi.from_asgi("/openapi.json", create_app(service))


# The event stream never ends by design (tests/api/test_api_events.py covers it).
schema = schemathesis.pytest.from_fixture("api_schema").exclude(path="/v1/events/stream")

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    allow_header_conformance,
]


@schema.parametrize()
@settings(
    max_examples=5,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_the_api_answers_every_generated_request_within_its_schema(
    case: schemathesis.Case,
) -> None:
    # The bar: no 5xx, and every answer (status, media type, headers, body) is
    # one the document describes. Business refusals of schema-valid input (an unknown
    # repo is a 422) are the API's contract, not a finding.
    case.call_and_validate(checks=CHECKS)
