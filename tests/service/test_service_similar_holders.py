"""The service's index of holding objectives stays in step with the projection.

After opens, objective changes, abandonments, a restart and a projection rebuilt from
its snapshot, the record the index gives equals the brute-force record over the holders
the projection has then (real SQLite store, real ansible commit subjects).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from detente.clock import FakeClock
from detente.domain.claims.commands import ChangeObjective, SetStatus
from detente.domain.claims.model import ClaimStatus
from detente.index.semantic import Similarity
from detente.service import RepoConfig, Service
from detente.service.search import semantic_record
from detente.service.similar_holders import holder_similarity
from detente.storage.sqlite import SqliteStore

from support import counting_ids, seed


def _subjects(count: int) -> list[str]:
    for parent in Path(__file__).resolve().parents:
        data = parent / "shared" / "data" / "ansible-commits.jsonl"
        if data.is_file():
            lines = data.read_text(encoding="utf-8").splitlines()[:count]
            return [str(json.loads(line)["subject"]) for line in lines]
    pytest.skip("shared data set not present")


def _service(db: Path, clock: FakeClock) -> Service:
    return Service(SqliteStore(db), clock, [RepoConfig("demo")], ids=counting_ids())


def _brute(service: Service, sim: Similarity, objective: str, exclude: str | None = None) -> object:
    state = service.fresh("demo")
    holders = [(c.id, c.objective) for c in state.claims.values() if c.holding and c.id != exclude]
    return semantic_record(sim, objective, holders)


def test_the_holder_index_answers_like_every_holder_compared_through_changes_and_restarts(
    tmp_path: Path,
) -> None:
    sim = Similarity("lexical")
    subjects = _subjects(160)
    clock = FakeClock()
    service = _service(tmp_path / "d.db", clock)
    ids = []
    for i, subject in enumerate(subjects[:80]):
        cmd = seed(f"src/p{i}/**", agent=f"agent-{i % 7}", objective=subject, ttl=3600)
        ids.append(service.claims.open_claim(cmd).claim.id)
    holders = holder_similarity(service)
    probes = subjects[120:160]
    for probe in probes[:10]:
        assert holders.record("demo", sim, probe) == _brute(service, sim, probe)

    for claim_id in ids[::4]:
        claim = service.claims.get_claim(claim_id).claim
        service.claims.set_status(SetStatus(claim_id, claim.revision, ClaimStatus.ABANDONED))
    for j, claim_id in enumerate(ids[1::4]):
        claim = service.claims.get_claim(claim_id).claim
        new = subjects[80 + j]
        service.claims.change_objective(ChangeObjective(claim_id, claim.revision, new))
    changed = ids[1]
    for probe in probes[10:20]:
        assert holders.record("demo", sim, probe) == _brute(service, sim, probe)
        found = holders.record("demo", sim, probe, exclude=changed)
        assert found == _brute(service, sim, probe, exclude=changed)

    # The projection restarts from its snapshot (as after a failed transaction).
    service.save_snapshots()
    with service.lock("demo"):
        service.discard("demo", folded=True)
    for probe in probes[20:30]:
        assert holders.record("demo", sim, probe) == _brute(service, sim, probe)

    # Another process (a restarted server) builds its index from the log.
    service.store.close()
    again = _service(tmp_path / "d.db", clock)
    for probe in probes[30:40]:
        expected = _brute(again, sim, probe)
        assert holder_similarity(again).record("demo", sim, probe) == expected
    assert any(record["similar"] for record in [_brute(again, sim, p) for p in probes])  # type: ignore[index]


def test_a_blank_objective_has_no_record(tmp_path: Path) -> None:
    service = _service(tmp_path / "d.db", FakeClock())
    service.claims.open_claim(seed("a/**", objective="retry the http client"))
    assert holder_similarity(service).record("demo", Similarity("lexical"), "  ") is None


def test_once_the_model_answers_the_lexical_index_of_the_holders_is_let_go(
    tmp_path: Path,
) -> None:
    from semantic_support import require_model

    semantic = require_model()
    lexical = Similarity("lexical")
    subjects = _subjects(30)
    service = _service(tmp_path / "d.db", FakeClock())
    for i, subject in enumerate(subjects[:20]):
        service.claims.open_claim(seed(f"src/p{i}/**", objective=subject, ttl=3600))
    holders = holder_similarity(service)

    assert holders.record("demo", lexical, subjects[25]) == _brute(service, lexical, subjects[25])
    assert holders.record("demo", semantic, subjects[26]) == _brute(service, semantic, subjects[26])
    assert list(holders._indexes) == [("demo", "semantic")]  # the lexical one freed
    # asked again (a forced lexical call), it is rebuilt and answers as before
    assert holders.record("demo", lexical, subjects[27]) == _brute(service, lexical, subjects[27])
