"""Running a claim's test commands for ``claim complete``: streamed, counted, summarised.

Each ``--test`` entry runs with ``sh -c`` in the claim's worktree, stdin closed, stdout
and stderr merged. Its output is passed on line by line as it arrives (to the given
``echo``: stdout in text mode, stderr under ``--json`` so stdout stays one document),
framed by a progress line before (``[1/2] unit: pytest -q``) and a result line after;
:func:`summary` is the closing line. The evidence record keeps the last 2,000
characters of the output.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["TestEntry", "run_test", "run_tests", "split_test", "summary"]

#: Characters of a test's output kept in its evidence record.
KEPT_OUTPUT = 2000

Echo = Callable[[str], None]
TestEntry = tuple[str | None, str]
"""``(responsibility name or None, shell command)``."""


def split_test(entry: str, responsibilities: Sequence[str]) -> TestEntry:
    """``NAME=COMMAND`` when NAME is one of the claim's test responsibilities, else the
    whole entry is the command (so ``FOO=1 make test`` stays an environment assignment)."""
    name, sep, command = entry.partition("=")
    if sep and name in responsibilities and command.strip():
        return name, command.strip()
    return None, entry


def run_test(
    command: str, cwd: Path, name: str | None = None, *, echo: Echo | None = None
) -> dict[str, Any]:
    """Run ``command`` with ``sh -c`` in ``cwd``, passing each output line to ``echo``.

    Returns:
        ``{name, status (passed|failed), exitCode, recordedAt, durationSeconds, output}``;
        ``recordedAt`` is when the command finished (RFC 3339 UTC), ``output`` its last
        2,000 characters of combined stdout and stderr.
    """
    from detente.clock import SystemClock, format_time

    started = time.monotonic()
    kept = ""
    with subprocess.Popen(
        ["sh", "-c", command],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    ) as proc:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace")
            kept = (kept + line)[-KEPT_OUTPUT:]
            if echo is not None:
                echo(line.rstrip("\r\n"))
        code = proc.wait()
    finished = SystemClock().now()
    return {
        "name": name or command,
        "status": "passed" if code == 0 else "failed",
        "exitCode": code,
        "recordedAt": format_time(finished),
        "durationSeconds": round(time.monotonic() - started, 3),
        "output": kept,
    }


def run_tests(
    entries: Sequence[TestEntry], cwd: Path, *, progress: Echo | None = None
) -> list[dict[str, Any]]:
    """Run every entry in order (all of them, even after a failure), reporting progress.

    Args:
        entries: ``(name or None, command)`` pairs (see :func:`split_test`).
        cwd: the worktree the commands run in.
        progress: receives the progress lines and the indented test output.

    Returns:
        The evidence test records, in order (see :func:`run_test`).
    """
    records = []
    total = len(entries)
    for number, (name, command) in enumerate(entries, 1):
        label = f"{name}: {command}" if name else command
        if progress is not None:
            progress(f"[{number}/{total}] running {label}")
        echo = (lambda line: progress(f"    {line}")) if progress is not None else None
        record = run_test(command, cwd, name, echo=echo)
        if progress is not None:
            progress(
                f"[{number}/{total}] {record['name']} {record['status']} "
                f"(exit {record['exitCode']}, {record['durationSeconds']:.1f} s)"
            )
        records.append(record)
    return records


def summary(records: Sequence[Mapping[str, Any]]) -> str:
    """``tests: 2 passed, 1 failed (unit) in 4.2 s`` (``no tests run`` for none)."""
    if not records:
        return "no tests run (--test NAME=COMMAND runs one in the worktree)"
    failed = [str(r["name"]) for r in records if r["status"] != "passed"]
    seconds = sum(float(r["durationSeconds"]) for r in records)
    text = f"tests: {len(records) - len(failed)} passed, {len(failed)} failed"
    if failed:
        text += f" ({', '.join(failed)})"
    return f"{text} in {seconds:.1f} s"
