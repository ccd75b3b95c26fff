"""``python -m detente.hooks <hook> [args]``: what the installed hook scripts run.

Hooks: ``pre-commit [--warn]``, ``post-commit``, ``pre-receive``, ``post-receive``,
``update <ref> <old> <new>``, ``reference-transaction <state>``.
"""

from __future__ import annotations

import sys

HOOKS = (
    "pre-commit",
    "post-commit",
    "pre-receive",
    "post-receive",
    "update",
    "reference-transaction",
)


def main(argv: list[str]) -> int:
    """Run the named hook; returns its exit status (0 lets git proceed)."""
    if not argv or argv[0] not in HOOKS:
        sys.stderr.write(f"usage: python -m detente.hooks {' | '.join(HOOKS)} [args]\n")
        return 2
    hook, args = argv[0], argv[1:]
    if hook == "pre-commit":
        from detente.hooks.pre_commit import run

        return run(warn="--warn" in args)
    if hook == "post-commit":
        from detente.hooks.post_commit import run as after_commit

        return after_commit()
    if hook == "update":
        from detente.hooks.server_hooks import update

        return update(args)
    if hook == "reference-transaction":
        from detente.hooks.server_hooks import reference_transaction

        state = args[0] if args else ""
        return reference_transaction(state, sys.stdin.read())
    from detente.hooks.pre_receive import run as receive
    from detente.hooks.pre_receive import run_post

    return (receive if hook == "pre-receive" else run_post)(sys.stdin.read())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
