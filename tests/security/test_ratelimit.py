"""Rate limits: a sliding window per principal and per session, on the fake clock."""

from __future__ import annotations

import pytest

from detente.clock import FakeClock
from detente.config import RateLimit
from detente.errors import RateLimited
from detente.security.ratelimit import RateLimiter


def test_the_action_past_the_limit_is_refused_until_the_oldest_leaves_the_window() -> None:
    clock = FakeClock()
    limiter = RateLimiter({"claim-open": RateLimit(per_principal=2, window_seconds=60)}, clock.now)
    limiter.check("claim-open", "alice")
    clock.advance(10)
    limiter.check("claim-open", "alice")
    with pytest.raises(RateLimited) as caught:
        limiter.check("claim-open", "alice")
    assert caught.value.retry_after == 50 and caught.value.code == "rate_limited"
    limiter.check("claim-open", "bob")  # another principal has its own count
    clock.advance(50)
    limiter.check("claim-open", "alice")  # the first left the window
    with pytest.raises(RateLimited):
        limiter.check("claim-open", "alice")


def test_a_session_is_limited_across_principals_and_a_refusal_counts_nothing() -> None:
    clock = FakeClock()
    limits = {"agent-register": RateLimit(per_principal=100, per_session=1, window_seconds=30)}
    limiter = RateLimiter(limits, clock.now)
    limiter.check("agent-register", "alice", "sess-1")
    with pytest.raises(RateLimited) as caught:
        limiter.check("agent-register", "bob", "sess-1")
    assert "session" in caught.value.detail
    limiter.check("agent-register", "bob", "sess-2")
    clock.advance(30)
    limiter.check("agent-register", "bob", "sess-1")


def test_actions_without_a_limit_are_never_refused() -> None:
    limiter = RateLimiter({"claim-open": RateLimit()}, FakeClock().now)
    for _ in range(1000):
        limiter.check("claim-open", "alice", "s")
        limiter.check("agent-register", "alice", "s")
