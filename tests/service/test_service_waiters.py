"""Several newcomers wait on one holder: when the holder lets go, exactly one of them
(the first to have asked) gets the contested targets and the others keep negotiating
with it in a room; nobody is left waiting on nobody.

Every test runs on every store and checks the protocol invariants after every command.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from detente.clock import FakeClock
from detente.domain.claims.commands import ChangeScope, SetStatus, TakeoverRequest
from detente.domain.claims.model import ClaimStatus
from detente.domain.meetings.model import MeetingStatus
from detente.errors import OverlapBlocking
from detente.service import Service

from support import seed


def _open(service: Service, agent: str, *paths: str) -> str:
    return service.claims.open_claim(seed(*paths, agent=agent, ttl=3600)).claim.id


def _status(service: Service, claim_id: str) -> ClaimStatus:
    return service.claims.get_claim(claim_id).claim.status


def _let_go(service: Service, holder: str, how: str) -> None:
    rev = service.claims.get_claim(holder).claim.revision
    if how == "abandon":
        service.claims.set_status(SetStatus(holder, rev, ClaimStatus.ABANDONED, reason="done"))
    else:
        service.claims.change_scope(
            ChangeScope(holder, rev, add_paths=("lib/**",), remove_paths=("src/app.py",))
        )


@pytest.mark.parametrize("how", ["abandon", "narrow"])
def test_when_the_holder_lets_go_the_first_waiter_gets_the_file_and_the_others_meet_it(
    service: Service, how: str
) -> None:
    holder = _open(service, "h", "src/app.py")
    waiters = [_open(service, f"w{i}", "src/app.py") for i in range(4)]
    assert [_status(service, w) for w in waiters] == [ClaimStatus.NEGOTIATING] * 4

    _let_go(service, holder, how)

    assert _status(service, waiters[0]) is ClaimStatus.ACTIVE
    assert service.claims.check_write(waiters[0], ["src/app.py"]) == ["src/app.py"]
    for w in waiters[1:]:
        view = service.claims.get_claim(w)
        assert view.claim.status is ClaimStatus.NEGOTIATING
        assert waiters[0] in [o.claim_id for o in view.overlaps]
        rooms = [m for m in view.meetings if m.status is MeetingStatus.OPEN]
        assert any(waiters[0] in m.participants for m in rooms)
    with pytest.raises(OverlapBlocking):
        service.claims.check_write(waiters[1], ["src/app.py"])


def test_the_first_waiter_goes_first_whatever_the_order_of_the_claim_ids(
    service: Service,
) -> None:
    holder = _open(service, "h", "src/**")
    late = _open(service, "late", "src/app.py")
    early_wide = _open(service, "early", "src/**")  # asked after `late`: it waits behind it
    _let_go(service, holder, "abandon")
    assert _status(service, late) is ClaimStatus.ACTIVE
    assert _status(service, early_wide) is ClaimStatus.NEGOTIATING


def test_a_waiter_on_another_file_is_granted_at_once_and_only_rivals_queue(
    service: Service,
) -> None:
    holder = _open(service, "h", "src/**")
    first = _open(service, "a", "src/a.py")
    second = _open(service, "b", "src/a.py")
    other = _open(service, "c", "src/b.py")
    _let_go(service, holder, "abandon")
    assert _status(service, first) is ClaimStatus.ACTIVE
    assert _status(service, other) is ClaimStatus.ACTIVE
    assert _status(service, second) is ClaimStatus.NEGOTIATING


def test_a_claim_that_expired_before_it_was_ever_granted_blocks_nobody(
    service: Service, clock: FakeClock
) -> None:
    holder = _open(service, "h", "src/app.py")
    lapsed = service.claims.open_claim(seed("src/app.py", agent="lapsed", ttl=60)).claim.id
    assert _status(service, lapsed) is ClaimStatus.NEGOTIATING
    clock.advance(120)
    newcomer = _open(service, "n", "src/app.py")
    assert _status(service, lapsed) is ClaimStatus.EXPIRED
    view = service.claims.get_claim(newcomer)
    assert [o.claim_id for o in view.overlaps] == [holder]  # not the lapsed waiter

    _let_go(service, holder, "abandon")
    assert _status(service, newcomer) is ClaimStatus.ACTIVE
    assert [o.claim_id for o in service.claims.get_claim(newcomer).overlaps] == []


def test_a_granted_claim_that_expired_still_holds_its_files(
    service: Service, clock: FakeClock
) -> None:
    holder = service.claims.open_claim(seed("src/app.py", agent="h", ttl=60)).claim.id
    clock.advance(120)
    newcomer = _open(service, "n", "src/app.py")
    assert _status(service, holder) is ClaimStatus.EXPIRED
    assert _status(service, newcomer) is ClaimStatus.NEGOTIATING
    assert [o.claim_id for o in service.claims.get_claim(newcomer).overlaps] == [holder]


def test_a_takeover_successor_keeps_its_predecessors_place_ahead_of_later_waiters(
    service: Service, clock: FakeClock
) -> None:
    holder = service.claims.open_claim(seed("src/app.py", agent="h", ttl=60)).claim.id
    waiter = _open(service, "w", "src/app.py")
    clock.advance(61 + service.policy.takeover_grace_seconds)
    assert _status(service, holder) is ClaimStatus.EXPIRED
    rev = service.claims.get_claim(holder).claim.revision
    successor = service.takeover.take_over(
        replace(seed("src/app.py", agent="s", ttl=3600), base_commit=""),
        TakeoverRequest(holder, rev),
    ).claim.id
    assert _status(service, successor) is ClaimStatus.ACTIVE
    assert service.claims.check_write(successor, ["src/app.py"]) == ["src/app.py"]
    assert _status(service, waiter) is ClaimStatus.NEGOTIATING


def test_a_waiters_place_in_line_is_when_it_asked_for_the_file_not_when_its_claim_opened(
    service: Service,
) -> None:
    holder = _open(service, "h", "src/app.py")
    early = _open(service, "early", "lib/**")  # opened first, on something else
    asked_first = _open(service, "asked-first", "src/app.py")
    rev = service.claims.get_claim(early).claim.revision
    service.claims.change_scope(ChangeScope(early, rev, add_paths=("src/app.py",)))
    assert _status(service, early) is ClaimStatus.NEGOTIATING  # asked later

    _let_go(service, holder, "abandon")

    assert _status(service, asked_first) is ClaimStatus.ACTIVE
    assert service.claims.check_write(asked_first, ["src/app.py"]) == ["src/app.py"]
    view = service.claims.get_claim(early)
    assert view.claim.status is ClaimStatus.NEGOTIATING
    assert view.claim.pending_paths == ("src/app.py",)
    assert asked_first in [o.claim_id for o in view.overlaps]
    with pytest.raises(OverlapBlocking):
        service.claims.check_write(early, ["src/app.py"])
