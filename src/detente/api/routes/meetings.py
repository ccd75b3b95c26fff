"""Meeting routes (API.md "Meetings")."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from detente.domain.wire import meeting_to_wire
from detente.service import Service


def router(service: Service) -> APIRouter:
    r = APIRouter()

    @r.get("/v1/meetings")
    def list_meetings(repo: str | None = None, status: str | None = None) -> dict[str, Any]:
        return {
            "meetings": [
                meeting_to_wire(m) for m in service.list_meetings(repo=repo, status=status)
            ]
        }

    @r.get("/v1/meetings/{meeting_id}")
    def get_meeting(meeting_id: str) -> dict[str, Any]:
        return {"meeting": meeting_to_wire(service.get_meeting(meeting_id))}

    return r
