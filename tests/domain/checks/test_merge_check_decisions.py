"""What a merge check means, decided on the state alone: which claims a moved branch is
merged with (those sharing a directory), and what a predicted conflict opens."""

from __future__ import annotations

from detente.domain import events as ev_types
from detente.domain.checks.merge import (
    MergeFinding,
    RecordMergeCheck,
    directories,
    merge_partners,
    shares_directory,
)
from detente.domain.checks.model import CLAIM_MERGE_CHECKED
from detente.domain.claims.commands import SetStatus
from detente.domain.claims.model import ClaimStatus

from decisions import ev, given, open_claim

HUNK = ("src/calc.py", 2, "<<<<<<< ours\n    return 10\ndef b():\n=======\n>>>>>>> theirs")
ALICE = open_claim("clm_a", symbols=("src/calc.py::a",), branch="claim/a")
BOB = open_claim("clm_b", agent="bob", symbols=("src/calc.py::b",), branch="claim/b")


def _conflict(claim_id: str, against: str) -> RecordMergeCheck:
    finding = MergeFinding(against, "f" * 40, False, ("src/calc.py",), (HUNK,))
    return RecordMergeCheck(claim_id, "e" * 40, ("src/calc.py",), (finding,))


def _clean(claim_id: str, against: str) -> RecordMergeCheck:
    return RecordMergeCheck(
        claim_id, "d" * 40, ("src/calc.py",), (MergeFinding(against, "f" * 40, True),)
    )


def test_claims_on_neighbouring_symbols_share_a_directory_and_do_not_overlap() -> None:
    g = given(ALICE, BOB)

    assert g.state.claims["clm_a"].status is ClaimStatus.ACTIVE
    assert g.state.claims["clm_b"].status is ClaimStatus.ACTIVE
    assert [c.id for c in merge_partners(g.state, "clm_b", ())] == ["clm_a"]


def test_a_predicted_conflict_opens_a_room_with_the_hunks_and_both_stay_active() -> None:
    g = given(ALICE, BOB)

    opened, checked = g.when(_conflict("clm_b", "clm_a")).then(
        ev(ev_types.MEETING_OPENED, participants=["clm_a", "clm_b"]),
        ev(CLAIM_MERGE_CHECKED, claimId="clm_b", checked=["clm_a"]),
    )

    [witness] = opened.data["mergeConflicts"]
    assert witness["hunks"] == [{"path": HUNK[0], "line": HUNK[1], "text": HUNK[2]}]
    assert witness["symbols"] == ["src/calc.py::a", "src/calc.py::b"]
    assert checked.data["meetingIds"] == [opened.data["meetingId"]]
    g.and_(_conflict("clm_b", "clm_a"))
    [room] = g.state.meetings.values()
    assert room.status.value == "open"  # the prediction stands: the room stays
    assert g.state.claims["clm_b"].status is ClaimStatus.ACTIVE


def test_a_clean_merge_opens_nothing() -> None:
    given(ALICE, BOB).when(_clean("clm_b", "clm_a")).then(
        ev(CLAIM_MERGE_CHECKED, conflicts=[], meetingIds=[])
    )


def test_a_standing_conflict_checked_again_joins_the_room_the_two_share() -> None:
    g = given(ALICE, BOB, _conflict("clm_b", "clm_a"))
    [room] = g.state.meetings

    g.when(_conflict("clm_a", "clm_b")).then(ev(CLAIM_MERGE_CHECKED, meetingIds=[room]))


def test_a_third_claim_conflicting_with_one_of_them_joins_their_merge_room() -> None:
    carol = open_claim("clm_c", agent="carol", symbols=("src/calc.py::c",), branch="claim/c")
    g = given(ALICE, BOB, carol, _conflict("clm_b", "clm_a"))
    [room] = g.state.meetings

    g.when(_conflict("clm_c", "clm_a")).then(
        ev(ev_types.MEETING_JOINED, meetingId=room, claimId="clm_c"),
        ev(CLAIM_MERGE_CHECKED, meetingIds=[room]),
    )


def test_the_room_dissolves_once_the_newest_check_of_the_pair_merges_cleanly() -> None:
    g = given(ALICE, BOB, _conflict("clm_b", "clm_a"))
    [room] = g.state.meetings

    g.and_(_clean("clm_a", "clm_b"))

    assert g.state.meetings[room].status.value == "resolved"


def test_the_room_dissolves_when_one_of_the_two_finishes() -> None:
    g = given(ALICE, BOB, _conflict("clm_b", "clm_a"))
    [room] = g.state.meetings

    g.and_(SetStatus("clm_a", g.state.claims["clm_a"].revision, ClaimStatus.ABANDONED, "done"))

    assert g.state.meetings[room].status.value == "resolved"


def test_a_conflict_with_the_integration_branch_is_recorded_without_a_room() -> None:
    finding = MergeFinding("ref:refs/heads/main", "f" * 40, False, ("src/calc.py",), (HUNK,))
    check = RecordMergeCheck("clm_a", "e" * 40, ("src/calc.py",), (finding,))

    given(ALICE).when(check).then(ev(CLAIM_MERGE_CHECKED, checked=["ref:refs/heads/main"]))


def test_a_finding_against_a_claim_gone_since_git_ran_is_dropped() -> None:
    g = given(ALICE, BOB)
    g.and_(SetStatus("clm_a", g.state.claims["clm_a"].revision, ClaimStatus.ABANDONED, "done"))

    g.when(_conflict("clm_b", "clm_a")).then(ev(CLAIM_MERGE_CHECKED, checked=[], conflicts=[]))


def test_a_claim_that_no_longer_holds_is_not_checked() -> None:
    g = given(ALICE)
    g.and_(SetStatus("clm_a", g.state.claims["clm_a"].revision, ClaimStatus.ABANDONED, "done"))

    g.when(_clean("clm_a", "clm_b")).raises("invalid_transition")


def test_directories_of_a_claim_come_from_its_targets_and_its_branchs_changes() -> None:
    g = given(open_claim("clm_a", "src/app/**", "docs/*.md", symbols=("lib/x.py::f",)))

    found = directories(g.state.claims["clm_a"], ["tests/unit/test_x.py"])

    assert found == {("src/app", True), ("docs", False), ("lib", False), ("tests/unit", False)}


def test_a_deep_glob_shares_every_directory_below_it_and_siblings_share_nothing() -> None:
    assert shares_directory([("src", True)], [("src/app/views", False)])
    assert shares_directory([("roles/x/tasks", False)], [("roles/x/tasks", False)])
    assert not shares_directory([("roles/x/tasks", False)], [("roles/x/handlers", False)])
    assert not shares_directory([("src", False)], [("src/app", False)])
    assert shares_directory([("", True)], [("anything/at/all", False)])  # **/*.md
