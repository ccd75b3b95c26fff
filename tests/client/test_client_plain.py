"""plain: the in-process client's copy of a wire value, with the types JSON decodes to."""

from __future__ import annotations

from collections import OrderedDict
from datetime import UTC, date, datetime
from enum import Enum, IntEnum, StrEnum
from pathlib import PurePosixPath

from detente.client.inprocess import plain


class Color(StrEnum):
    RED = "red"


class Level(IntEnum):
    HIGH = 3


class Shape(Enum):
    ROUND = ("round", 1)


def test_plain_turns_every_non_json_type_into_what_json_would_decode() -> None:
    value = {
        "enum": Color.RED,
        Color.RED: Level.HIGH,
        Level.HIGH: Shape.ROUND,
        "tuple": (1, (2, 3)),
        "set": frozenset({"a"}),
        "at": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        "day": date(2026, 1, 2),
        "path": PurePosixPath("src/a.py"),
        "ordered": OrderedDict([("k", [True, None, 1.5])]),
    }

    copied = plain(value)

    assert copied == {
        "enum": "red",
        "red": 3,
        "3": ["round", 1],
        "tuple": [1, [2, 3]],
        "set": ["a"],
        "at": "2026-01-02T03:04:05+00:00",
        "day": "2026-01-02",
        "path": "src/a.py",
        "ordered": {"k": [True, None, 1.5]},
    }
    assert [type(k) for k in copied] == [str] * len(copied)
    assert type(copied["enum"]) is str and type(copied["red"]) is int
    assert type(copied["ordered"]) is dict


def test_plain_copies_so_the_caller_never_changes_the_original() -> None:
    inner = {"paths": ["a/**"], "lease": {"revision": 1}}
    value = {"claims": [inner]}

    copied = plain(value)
    copied["claims"][0]["paths"].append("b/**")
    copied["claims"][0]["lease"]["revision"] = 2

    assert inner == {"paths": ["a/**"], "lease": {"revision": 1}}
    assert copied["claims"][0] is not inner
