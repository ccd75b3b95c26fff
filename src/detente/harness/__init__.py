"""Agent harness hooks: edit-time coordination inside Claude Code, Codex, Cursor and Gemini CLI.

An adapter, like :mod:`detente.hooks` (the git hooks): each harness runs
``detente hook-harness <harness> <event>`` before a tool acts and at session start, stop
and end (the configuration ``detente init`` writes, :mod:`detente.harness.setup`). The
command reads the harness's JSON payload on stdin (:mod:`detente.harness.payloads`),
asks detente through the client (the pre-commit operation of the application layer, the
one authority rule: :mod:`detente.harness.judge`) and answers in the harness's own
allow/deny contract (:mod:`detente.harness.answers`). Nothing here decides who may
write what; the adapter only reads paths out of payloads and words the answer.

The payload shapes relied on, with their sources, are the fixtures under
``tests/fixtures/harness/<harness>/``; ``docs/harnesses.md`` describes the set-up.
"""

from __future__ import annotations

from detente.domain.agents.session_claims import HARNESSES

__all__ = ["HARNESSES"]
