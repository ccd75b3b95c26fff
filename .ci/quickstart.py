"""Print one command of README.md's Quickstart, as written (CI runs it verbatim).

Usage: ``python .ci/quickstart.py N`` prints the N-th command (1: install and run the main
job, 2: install and run the tests) of the first ``sh`` block under ``## Quickstart``,
without its trailing comment. Exits 1 when the README has no such command, so a README
edit that drops one fails CI instead of skipping its check.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path


def quickstart_commands(readme: str) -> list[str]:
    section = readme.split("\n## Quickstart", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    if block is None:
        return []
    commands = []
    for line in block.group(1).splitlines():
        command = re.sub(r"\s+#.*$", "", line).strip()
        if command and not command.startswith("#"):
            commands.append(command)
    return commands


def main() -> int:
    index = int(sys.argv[1])
    commands = quickstart_commands(Path(__file__).parents[1].joinpath("README.md").read_text())
    if len(commands) < index:
        print(f"README.md's Quickstart has no command {index}: {commands}", file=sys.stderr)
        return 1
    print(commands[index - 1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
