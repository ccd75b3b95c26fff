"""A claimed symbol is a qualified name: identifiers joined by '.', like a module's dotted
name; an empty part or whitespace names no definition in any language and is refused."""

from __future__ import annotations

import pytest

from detente.domain import events as ev_types

from decisions import given, open_claim


@pytest.mark.parametrize(
    "symbol",
    ["f.py::K..a", "f.py::.K", "f.py::K.", "f.py::K a", "f.py::K::a", "K..a"],
)
def test_a_symbol_with_an_empty_part_or_whitespace_is_refused(symbol: str) -> None:
    given().when(open_claim("clm_a", symbols=(symbol,))).raises(
        "validation_error", field="symbols[0]"
    )


@pytest.mark.parametrize(
    "symbol", ["f.py::K.a", "f.py::top", "web/app.ts::Router.$get", "Café.naïve", "x.go::T.M"]
)
def test_a_qualified_name_of_identifiers_is_claimed(symbol: str) -> None:
    given().when(open_claim("clm_a", symbols=(symbol,))).then(
        ev_types.CLAIM_ANNOUNCED, ev_types.CLAIM_ACTIVATED
    )
