"""The writes a shell command makes, read from its text where they can be."""

from __future__ import annotations

import pytest

from detente.harness.shell_paths import shell_writes


@pytest.mark.parametrize(
    ("command", "paths"),
    [
        ("echo x > src/a.py", ["src/a.py"]),
        ("echo x >> src/a.py && cat src/b.py", ["src/a.py"]),
        ("sed -i 's/a/b/' src/a.py src/b.py", ["src/a.py", "src/b.py"]),
        ("sed -i.bak -e s/a/b/ src/a.py", ["src/a.py"]),
        ("printf x | tee -a src/a.py", ["src/a.py"]),
        ("git checkout -- src/a.py src/b.py", ["src/a.py", "src/b.py"]),
        ("git restore src/a.py", ["src/a.py"]),
        ("cp src/a.py src/b.py", ["src/b.py"]),
        ("mv src/a.py src/b.py", ["src/b.py", "src/a.py"]),
        ("cd sub; echo 1 > out.txt", ["sub/out.txt"]),
        ("git rm -q src/a.py", ["src/a.py"]),
        ("perl -pi -e 's/a/b/' src/a.py", ["src/a.py"]),
        ("dd if=/dev/zero of=src/a.py bs=1 count=1", ["src/a.py"]),
        ("git mv src/a.py src/b.py", ["src/a.py", "src/b.py"]),
        ("cd src && sed -i s/a/b/ a.py", ["src/a.py"]),
        ("cd src; cd ../docs; echo > /abs/x > b.md", ["/abs/x", "src/../docs/b.md"]),
        ("true\nsed -i s/a/b/ src/a.py", ["src/a.py"]),
        ("(echo hi > src/a.py)", ["src/a.py"]),
        ("{ echo hi; } >src/a.py", ["src/a.py"]),
        ("echo x &> src/a.py", ["src/a.py"]),
        ("echo x >| src/a.py 2>&1", ["src/a.py"]),
        ("echo x >&2 2>> src/log", ["src/log"]),
        ("sudo -n sed -i s/a/b/ src/a.py", ["src/a.py"]),
        ("X=1 env Y=2 tee src/a.py", ["src/a.py"]),
        ("timeout 5 touch src/a.py", ["src/a.py"]),
        ("bash -c 'echo x > src/a.py'", ["src/a.py"]),
        ("cp src/a.py src/b.py docs/", ["docs/a.py", "docs/b.py"]),
        ("ln -sf /etc/hosts src/a.py", ["src/a.py"]),
        ("cat > src/a.py <<'EOF'\ndon't > b.py\nEOF\ntouch c.py", ["src/a.py", "c.py"]),
        ("cat <<-EOF > src/a.py\n\tx\n\tEOF", ["src/a.py"]),
    ],
)
def test_named_files_are_read(command: str, paths: list[str]) -> None:
    assert shell_writes(command).paths == paths


@pytest.mark.parametrize(
    ("command", "changed", "staged", "pushed"),
    [
        ("git add -A", True, False, False),
        ("git add .", True, False, False),
        ("git stash", True, False, False),
        ("git reset --hard HEAD~1", True, False, False),
        ("git commit -m wip", False, True, False),
        ("git commit -am wip", True, True, False),
        ("git -C sub push origin main", False, False, True),
        ("git checkout .", True, False, False),
        ("git clean -fd", True, False, False),
        ("git clean -n", False, False, False),
    ],
)
def test_git_commands_that_write_every_change_or_publish_are_flagged(
    command: str, changed: bool, staged: bool, pushed: bool
) -> None:
    writes = shell_writes(command)

    assert (writes.changed, writes.staged, writes.pushed) == (changed, staged, pushed)


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "git status",
        "git add src/a.py",
        'python -c \'open("a", "w")\'',
        "echo x > $OUT",
        "echo 'unbalanced",
        "cat a 2>/dev/null",
        "perl -Mstrict -e 'print 1' src/a.py",
        "git config core.hooksPath",
        "git config --get core.hooksPath",
        "cd $DIR && touch a.py",
        "cat <<EOF\necho x > a.py\nEOF",
    ],
)
def test_what_cannot_be_read_is_not_judged(command: str) -> None:
    assert shell_writes(command).empty


@pytest.mark.parametrize(
    "command",
    [
        "git config core.hooksPath /dev/null",
        "git config --unset core.hooksPath",
        "git -c core.hooksPath=/tmp/none commit -m x",
    ],
)
def test_turning_the_git_hooks_off_is_a_write_of_detentes_own_files(command: str) -> None:
    from pathlib import Path

    from detente.harness.gate import own_files_refusal, touched_files
    from detente.harness.payloads import HookEvent

    event = HookEvent("claude", "pre-tool", "shell", "S", Path("/nowhere"), command=command)

    assert shell_writes(command).hooks_path
    assert own_files_refusal(touched_files(event, Path("/nowhere"))) is not None


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    "command",
    [
        pytest.param("echo " + "a" * 4_000_000 + " > src/a.py", id="one-4MB-word"),
        pytest.param("X=1 " * 1_000_000 + "tee src/a.py", id="a-million-assignments"),
    ],
)
def test_a_command_too_long_to_read_is_left_unread_and_says_why(command: str) -> None:
    writes = shell_writes(command)

    assert writes.empty and writes.paths == []
    assert "too long to read" in writes.unread and "4,0" in writes.unread


@pytest.mark.timeout(20)
def test_a_long_here_document_does_not_count_toward_the_limit() -> None:
    command = "cat <<'EOF' > src/big.txt\n" + "x = 1\n" * 700_000 + "EOF\ntouch src/b.py"

    writes = shell_writes(command)

    assert writes.unread == "" and writes.paths == ["src/big.txt", "src/b.py"]


@pytest.mark.timeout(20)
def test_many_leading_assignments_under_the_limit_are_skipped_in_linear_time() -> None:
    writes = shell_writes("X=1 " * 7_000 + "tee src/a.py")

    assert writes.paths == ["src/a.py"] and writes.unread == ""
