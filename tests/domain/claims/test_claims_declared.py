"""The declared facts: one dataclass and one wire record that agree, carried whole."""

from __future__ import annotations

from dataclasses import fields
from typing import get_type_hints

import pytest

from detente.domain.claims.declared import (
    NO_FACTS,
    WIRE_NAMES,
    Declared,
    DeclaredRecord,
    declared_from_wire,
    declared_to_wire,
    validate_declared,
)
from detente.domain.policy import DEFAULT_POLICY
from detente.errors import ValidationError


def test_every_fact_has_one_wire_member_and_every_member_one_fact() -> None:
    assert set(get_type_hints(DeclaredRecord)) == set(WIRE_NAMES)
    assert len(WIRE_NAMES) == len(fields(Declared))


def test_facts_survive_the_wire_both_ways() -> None:
    facts = Declared(deployment_responsibility="staging")
    wire = declared_to_wire(facts)
    assert wire == {"deploymentResponsibility": "staging"}
    assert declared_from_wire(wire) == facts


def test_a_record_that_declares_nothing_reads_as_no_facts() -> None:
    assert declared_from_wire({"deploymentResponsibility": None, "paths": []}) is NO_FACTS
    assert declared_to_wire(NO_FACTS) == {"deploymentResponsibility": None}


def test_a_declared_text_is_stripped_by_the_text_rule() -> None:
    facts = validate_declared(Declared(deployment_responsibility="  prod "), DEFAULT_POLICY)
    assert facts.deployment_responsibility == "prod"


@pytest.mark.parametrize("bad", ["pr\nod", "a\u200bb", "x" * (DEFAULT_POLICY.max_text + 1)])
def test_a_name_with_a_newline_a_format_character_or_too_long_is_refused_by_its_wire_name(
    bad: str,
) -> None:
    with pytest.raises(ValidationError) as caught:
        validate_declared(Declared(deployment_responsibility=bad), DEFAULT_POLICY)
    assert caught.value.field == "deploymentResponsibility"


def test_a_fact_that_is_not_text_is_refused() -> None:
    with pytest.raises(ValidationError, match="deploymentResponsibility must be a string"):
        validate_declared(Declared(deployment_responsibility=3), DEFAULT_POLICY)  # type: ignore[arg-type]
