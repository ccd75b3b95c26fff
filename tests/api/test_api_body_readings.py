"""A request body a parser may read differently from another is refused with one clear
4xx, and changes nothing: duplicate keys, ``NaN``/``Infinity``, a byte order mark, a
lone surrogate escape, bytes that are not UTF-8."""

from __future__ import annotations

import json

import httpx
import pytest

from support import claim_body

_GOOD = json.dumps(claim_body("docs/**"))


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (_GOOD[:-1] + ', "objective": "something else"}', "duplicate"),
        (_GOOD.replace('"leaseTtlSeconds": 60', '"leaseTtlSeconds": NaN'), "NaN"),
        (_GOOD.replace('"leaseTtlSeconds": 60', '"leaseTtlSeconds": Infinity'), "Infinity"),
        ("\ufeff" + _GOOD, "byte order mark"),
        (_GOOD.replace('"docs/**"', '"docs/\\ud800**"'), "surrogate"),
    ],
)
def test_a_body_parsers_may_read_differently_is_a_4xx_naming_why_and_changes_nothing(
    http: httpx.Client, body: str, says: str
) -> None:
    r = http.post("/v1/claims", content=body.encode(), headers={"content-type": "application/json"})

    assert 400 <= r.status_code < 500, r.text
    assert r.json()["code"] == "validation_error"
    assert says in r.json()["detail"]
    assert http.get("/v1/claims", params={"repo": "demo"}).json()["claims"] == []


def test_a_body_that_is_not_utf8_is_a_4xx_and_changes_nothing(http: httpx.Client) -> None:
    body = _GOOD.replace('"docs/**"', '"docs/caf\xe9/**"').encode("latin-1")
    r = http.post("/v1/claims", content=body, headers={"content-type": "application/json"})

    assert 400 <= r.status_code < 500, r.text
    assert http.get("/v1/claims", params={"repo": "demo"}).json()["claims"] == []
