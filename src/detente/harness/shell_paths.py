"""The paths a shell command writes, where they can be read from its text.

Judged (``shell_writes``): ``git commit`` (the staged files: judged as a commit is),
``git add -A`` / ``git add .`` (every changed file), ``git stash``, ``git checkout --
PATH...`` and ``git restore PATH...`` (they overwrite the files), ``git reset --hard``
(every changed file), ``git push`` (the files of the commits not yet upstream),
``sed -i ... FILE``, ``tee FILE``, ``cp``/``mv`` targets and ``>`` / ``>>``
redirections. Everything else, and anything the tokenizer cannot read (unbalanced
quotes, substitutions in a path), is not judged: the git hooks still are.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

__all__ = ["ShellWrites", "shell_writes"]

#: Where a command list splits into simple commands.
_SEPARATORS = {";", "&&", "||", "|", "&", "\n"}
_REDIRECT = re.compile(r"^(\d*|&)(>>?|>\|)(.*)$")


@dataclass
class ShellWrites:
    """What a command writes.

    Attributes:
        paths: files named in the command (relative to its directory, or absolute).
        changed: the command writes every changed file of the worktree (``git add -A``,
            ``git stash``, ``git reset --hard``, ``git commit -a``).
        staged: the command commits the staged files (``git commit``).
        pushed: the command pushes the branch's commits (``git push``): their files.
        git: the git subcommand judged, if any (for the answer's wording).
    """

    paths: list[str] = field(default_factory=list)
    changed: bool = False
    staged: bool = False
    pushed: bool = False
    git: str | None = None

    @property
    def empty(self) -> bool:
        return not (self.paths or self.changed or self.staged or self.pushed)


def _split(command: str) -> list[list[str]] | None:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError:
        return None
    out: list[list[str]] = [[]]
    for token in tokens:
        if token in _SEPARATORS or token in ("(", ")"):
            out.append([])
        else:
            out[-1].append(token)
    return [c for c in out if c]


def _plain(path: str) -> bool:
    return bool(path) and not any(ch in path for ch in "$`*?[") and path != "/dev/null"


def shell_writes(command: str) -> ShellWrites:
    """The writes of ``command`` that can be read from its text (see the module docstring).

    Never raises: an unreadable command gives an empty :class:`ShellWrites`.
    """
    out = ShellWrites()
    simple = _split(command)
    if simple is None:
        return out
    for words in simple:
        words = _redirections(words, out)
        if not words:
            continue
        name = words[0].rsplit("/", 1)[-1]
        args = words[1:]
        if name == "git":
            _git(args, out)
        elif name == "sed" and any(a == "-i" or a.startswith(("-i", "--in-place")) for a in args):
            files = [a for a in args if not a.startswith("-")]
            out.paths += [f for f in files[1:] if _plain(f)]  # the first is the script
        elif name == "tee":
            out.paths += [a for a in args if not a.startswith("-") and _plain(a)]
        elif name in ("cp", "mv", "install") and len(args) >= 2:
            target = [a for a in args if not a.startswith("-")]
            if target and _plain(target[-1]):
                out.paths.append(target[-1])
                if name == "mv":
                    out.paths += [a for a in target[:-1] if _plain(a)]
        elif name in ("rm", "truncate", "touch"):
            out.paths += [a for a in args if not a.startswith("-") and _plain(a)]
    out.paths = list(dict.fromkeys(out.paths))
    return out


def _redirections(words: list[str], out: ShellWrites) -> list[str]:
    """``words`` without their output redirections, whose targets go to ``out``."""
    kept: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word in (">", ">>") and i + 1 < len(words):
            if _plain(words[i + 1]) and not words[i + 1].startswith("&"):
                out.paths.append(words[i + 1])
            i += 2
            continue
        if word in ("<",) and i + 1 < len(words):
            i += 2
            continue
        kept.append(word)
        i += 1
    return kept


def _writes_every_change(sub: str, rest: list[str]) -> bool:
    """``git add -A``/``.``, ``git stash [push|save]``, ``git reset --hard``."""
    if sub == "add":
        return any(a in ("-A", "--all", ".", ":/") for a in rest)
    if sub == "stash":
        return not rest or rest[0] in ("push", "save", "-u", "--include-untracked")
    return sub == "reset" and "--hard" in rest


def _git(args: list[str], out: ShellWrites) -> None:
    while args and args[0].startswith("-"):  # git -C DIR / -c k=v: options of git itself
        args = args[2:] if args[0] in ("-C", "-c") else args[1:]
    if not args:
        return
    sub, rest = args[0], args[1:]
    if sub == "commit":
        out.git = sub
        out.staged = True
        out.changed = out.changed or any(a in ("-a", "--all") or a.startswith("-a") for a in rest)
    elif _writes_every_change(sub, rest):
        out.git, out.changed = sub, True
    elif sub in ("checkout", "restore") and rest:
        named = rest[rest.index("--") + 1 :] if "--" in rest else []
        if sub == "restore" and not named:
            named = [a for a in rest if not a.startswith("-")]
        if named:
            out.git = sub
            out.paths += [p for p in named if _plain(p)]
            out.changed = out.changed or "." in named
    elif sub == "push":
        out.git, out.pushed = sub, True
