"""The gate endpoints (completion, patches, deployments, hook checks) over a
:class:`~detente.cli.client.Client` (the same transport in server and local mode)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from detente.cli.client import Client

__all__ = ["GatesApi"]


class GatesApi:
    """One method per endpoint; each returns the decoded JSON object or raises the
    :mod:`detente.errors` exception of the problem's ``code``."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def _call(
        self,
        method: str,
        path: str,
        body: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        return self.client._request(method, path, json=body, params=params)

    def complete(self, claim_id: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """``POST /v1/claims/{id}/complete``: ``{claim}``."""
        return self._call("POST", f"/v1/claims/{claim_id}/complete", body)

    def publish_patch(self, claim_id: str, base_commit: str, mbox: str) -> dict[str, Any]:
        """``POST /v1/patches``: ``{patch, created}``."""
        body = {"claimId": claim_id, "baseCommit": base_commit, "format": "mbox", "mbox": mbox}
        return self._call("POST", "/v1/patches", body)

    def patches(self, repo: str | None = None, status: str | None = None) -> dict[str, Any]:
        """``GET /v1/patches``: ``{patches[]}``."""
        return self._call("GET", "/v1/patches", params={"repo": repo, "status": status})

    def patch(self, patch_id: str) -> dict[str, Any]:
        """``GET /v1/patches/{id}``: ``{patch}`` with its ``mbox``."""
        return self._call("GET", f"/v1/patches/{patch_id}")

    def deploy(self, env: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """``POST /v1/deployments/{env}``: ``{deployment, history[], environment, policy}``."""
        return self._call("POST", f"/v1/deployments/{env}", body)

    def deployment(self, env: str, repo: str | None = None) -> dict[str, Any]:
        """``GET /v1/deployments/{env}``."""
        return self._call("GET", f"/v1/deployments/{env}", params={"repo": repo})

    def pre_commit(self, repo: str, claim_id: str | None, paths: Sequence[str]) -> dict[str, Any]:
        """``POST /v1/hooks/pre-commit``: ``{ok, claimId, problems[], findings[], reasons[]}``."""
        body = {"repo": repo, "claimId": claim_id, "paths": list(paths)}
        return self._call("POST", "/v1/hooks/pre-commit", body)

    def pre_receive(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``POST /v1/hooks/pre-receive``: ``{ok, ref, commits}`` or ``evidence_rejected``."""
        return self._call("POST", "/v1/hooks/pre-receive", body)

    def post_receive(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``POST /v1/hooks/post-receive``: ``{integrated[]}``."""
        return self._call("POST", "/v1/hooks/post-receive", body)

    def claims(self, repo: str | None = None, status: str | None = None) -> list[dict[str, Any]]:
        """``GET /v1/claims``: the claim records."""
        found: list[dict[str, Any]] = self._call(
            "GET", "/v1/claims", params={"repo": repo, "status": status}
        )["claims"]
        return found
