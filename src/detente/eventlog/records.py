"""Projection rows: the current record of one aggregate, stored beside the log."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RecordRow:
    """A projection row: the current wire record of one claim, meeting, ...

    Attributes:
        kind: the record kind (``claim``, ``meeting``, ``agent``, ``memory``, ``patch``,
            ``deployment``, ``resource``); with ``id`` the row's key.
        id / repo: the record's id and repository.
        revision: the record's stream revision (the CAS value clients send back).
        status: a short status for filtering.
        body: the API.md wire record (JSON object).
    """

    kind: str
    id: str
    repo: str
    revision: int
    status: str
    body: Mapping[str, Any]
