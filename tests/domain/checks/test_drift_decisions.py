"""Declared versus touched, decided on the state alone: a changed path outside the claim's
granted scope is drift, recorded when the set changes."""

from __future__ import annotations

from detente.domain.checks.drift import RecordDrift, outside_scope
from detente.domain.checks.model import CLAIM_DRIFTED
from detente.domain.claims.commands import ChangeScope

from decisions import ev, given, open_claim

ALICE = open_claim("clm_a", "src/**", symbols=("lib/calc.py::a",))


def test_paths_outside_the_granted_scope_drift() -> None:
    touched = ("src/app.py", "lib/calc.py", "docs/x.md", "README.md")

    given(ALICE).when(RecordDrift("clm_a", "e" * 40, touched)).then(
        ev(CLAIM_DRIFTED, claimId="clm_a", drifted=["README.md", "docs/x.md"], touched=4)
    )


def test_the_same_drift_is_not_recorded_twice_and_a_cleared_one_is() -> None:
    g = given(ALICE, RecordDrift("clm_a", None, ("docs/x.md",)))

    g.when(RecordDrift("clm_a", None, ("docs/x.md", "src/a.py"))).then()
    g.when(RecordDrift("clm_a", None, ("src/a.py",))).then(ev(CLAIM_DRIFTED, drifted=[]))


def test_work_inside_the_scope_is_no_drift() -> None:
    given(ALICE).when(RecordDrift("clm_a", None, ("src/x/y.py", "lib/calc.py"))).then()


def test_a_path_still_pending_is_outside_the_granted_scope() -> None:
    g = given(ALICE, open_claim("clm_b", "docs/**", agent="bob"))
    # alice asks for docs/x.md too: contested, it waits in pendingPaths
    g.and_(ChangeScope("clm_a", g.state.claims["clm_a"].revision, add_paths=("docs/x.md",)))
    claim = g.state.claims["clm_a"]
    assert claim.pending_paths == ("docs/x.md",)

    assert outside_scope(g.state, claim, ("docs/x.md", "src/ok.py")) == ("docs/x.md",)
