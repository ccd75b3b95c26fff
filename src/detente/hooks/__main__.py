"""``python -m detente.hooks pre-commit [--warn] | pre-receive | post-receive``."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    """Run the named hook; returns its exit status (0 lets git proceed)."""
    if not argv or argv[0] not in ("pre-commit", "pre-receive", "post-receive"):
        sys.stderr.write(
            "usage: python -m detente.hooks pre-commit [--warn] | pre-receive | post-receive\n"
        )
        return 2
    if argv[0] == "pre-commit":
        from detente.hooks.pre_commit import run

        return run(warn="--warn" in argv[1:])
    from detente.hooks.pre_receive import run as receive
    from detente.hooks.pre_receive import run_post

    return (receive if argv[0] == "pre-receive" else run_post)(sys.stdin.read())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
