"""The body of ``GET /v1/claims``, converted and written a chunk of claims at a time.

A page without ``limit`` holds every claim (10,000 live claims: about 10 MB of JSON).
Built at once, as FastAPI builds a returned value, the answer exists four times over
before its first byte leaves (the wire dicts, their validated copy, the JSON bytes and
the response's copy of them): some 30 MB that the allocator keeps after the request. Here
the claims are converted, validated and encoded :data:`CHUNK` at a time, with the same
:class:`pydantic.TypeAdapter` serialization FastAPI applies to the declared
:class:`~detente.operations.wire.ClaimList`, so the bytes are those of the whole-page answer
(a test compares them); a page of at most :data:`CHUNK` claims is answered in one piece.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from fastapi.responses import Response, StreamingResponse
from pydantic import TypeAdapter

from detente.domain.claims.record import claim_to_wire
from detente.operations import wire

if TYPE_CHECKING:
    from detente.domain.claims.model import Claim

__all__ = ["CHUNK", "claim_list_response", "encode_claim_list"]

#: Claims converted and encoded together (one write of the streamed answer).
CHUNK = 250


@functools.cache
def _adapters() -> tuple[TypeAdapter[Any], TypeAdapter[Any]]:
    """The encoders of the whole answer and of a run of claims (built on first use)."""
    return TypeAdapter(wire.ClaimList), TypeAdapter(list[wire.Claim])


def encode_claim_list(page: Sequence[Claim], next_cursor: str | None) -> Iterator[bytes]:
    """The JSON of ``{claims, nextCursor}`` for ``page``, in pieces (one per chunk).

    Args:
        page: the claim records of the page, in list order.
        next_cursor: the next page's cursor (None: the last page).

    Yields:
        Bytes whose concatenation is the compact JSON FastAPI would answer for the page.

    Raises:
        pydantic.ValidationError: a record whose wire form breaks the declared schema
            (a bug: the answer is cut short, as a failed response validation is a 500).
    """
    whole, claims = _adapters()
    empty = whole.dump_json({"claims": [], "nextCursor": next_cursor}, by_alias=True)
    head, _, tail = empty.partition(b"[]")
    yield head + b"["
    for start in range(0, len(page), CHUNK):
        run = [claim_to_wire(c) for c in page[start : start + CHUNK]]
        encoded = claims.dump_json(claims.validate_python(run), by_alias=True)
        yield (b"," if start else b"") + encoded[1:-1]
    yield b"]" + tail


def claim_list_response(page: Sequence[Claim], next_cursor: str | None) -> Response:
    """The response of one page: in one piece up to :data:`CHUNK` claims, else streamed
    chunk by chunk (each chunk's wire dicts freed before the next is built)."""
    if len(page) <= CHUNK:
        body = b"".join(encode_claim_list(page, next_cursor))
        return Response(content=body, media_type="application/json")
    return StreamingResponse(encode_claim_list(page, next_cursor), media_type="application/json")
