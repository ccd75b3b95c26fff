"""The paths a shell command writes, where they can be read from its text.

Judged (``shell_writes``): ``git commit`` (the staged files: judged as a commit is),
``git add -A`` / ``git add .`` (every changed file), ``git stash``, ``git checkout --
PATH...`` and ``git restore PATH...`` (they overwrite the files), ``git reset --hard``
(every changed file), ``git checkout .`` and ``git clean -f`` (every changed or
untracked file), ``git rm``/``git mv`` paths, ``git push`` (the files of the commits not
yet upstream), ``sed -i ... FILE``, ``perl -i ... FILE``, ``dd of=FILE``, ``tee FILE``,
``cp``/``mv``/``ln`` targets and output redirections (``>``, ``>>``, ``>|``, ``&>``).
Every simple command of a list counts: split at ``;``, ``&&``, ``||``, ``|``, ``&``, a
newline and a subshell's parentheses; a here-document's body is text, not commands.
Paths follow a ``cd`` before them; leading assignments (``X=1``) and wrappers (``sudo``,
``env``, ``nohup``, ``timeout N`` ...) are skipped, and ``sh -c``/``bash -c`` text is
read as a command. Everything else, and anything the tokenizer cannot read (unbalanced
quotes, substitutions in a path, a ``cd`` to a directory it cannot name), is not
judged: the git hooks still are. Neither is a command whose text outside its
here-documents is longer than :data:`MAX_COMMAND` characters (the tokenizer is not fast
enough to read it before every tool use): :attr:`ShellWrites.unread` says so, and the
hook allows it and logs why.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, field

__all__ = ["MAX_COMMAND", "ShellWrites", "shell_writes"]

#: Longest command text read (here-document bodies not counted), in characters.
MAX_COMMAND = 32 * 1024

#: One shell operator: output redirections (``>``, ``>>``, ``>|``, ``>&``, ``&>``,
#: ``&>>``), input ones (``<``, ``<<``, ``<<-``, ``<<<``) and separators.
_OPERATOR = re.compile(r"&>>?|>>?[|&]?|<<<|<<-?|<>?|&&|\|\||[;&|()\n]")
#: A here-document's operator and delimiter on a line (its body follows, unread).
_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z0-9_.-]+)\2")
#: Commands that run the rest of their words as a command.
_WRAPPERS = {"sudo", "doas", "env", "command", "nohup", "time", "nice", "exec", "stdbuf"}
_SHELLS = {"sh", "bash", "zsh", "dash", "ksh"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


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
        hooks_path: the command sets or unsets git's ``core.hooksPath`` (it would turn
            detente's git hooks off: a write of the repository's ``.git/config``).
        unread: why the command was not read at all ("" when it was).
    """

    paths: list[str] = field(default_factory=list)
    changed: bool = False
    staged: bool = False
    pushed: bool = False
    git: str | None = None
    hooks_path: bool = False
    unread: str = ""

    @property
    def empty(self) -> bool:
        return not (self.paths or self.changed or self.staged or self.pushed or self.hooks_path)


def _without_heredocs(command: str) -> str:
    """``command`` without its here-documents' bodies (text fed to a command, never run)."""
    out: list[str] = []
    ending: list[tuple[str, bool]] = []
    for line in command.split("\n"):
        if ending:
            delimiter, tabs = ending[0]
            if (line.lstrip("\t") if tabs else line) == delimiter:
                ending.pop(0)
            continue
        out.append(line)
        ending = [(m.group(3), m.group(1) == "-") for m in _HEREDOC.finditer(line)]
    return "\n".join(out)


def _split(text: str) -> list[list[str]] | None:
    """The simple commands of ``text`` (a command without its here-documents' bodies):
    words, and operators as separate items (a separator ends a command)."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|<>()\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError:
        return None
    out: list[list[str]] = [[]]
    for token in tokens:
        pieces = _OPERATOR.findall(token) if token and set(token) <= set(";&|<>()\n") else []
        if not pieces:
            out[-1].append(token)
            continue
        for piece in pieces:
            if piece[0] in ">&<" and piece not in ("&", "&&"):
                out[-1].append(piece)  # a redirection: it stays with its command
            else:
                out.append([])
    return [c for c in out if c]


def _plain(path: str) -> bool:
    return bool(path) and not any(ch in path for ch in "$`*?[~") and path != "/dev/null"


def _command_words(words: list[str]) -> list[str]:
    """``words`` without leading assignments (``X=1``) and wrappers (``sudo``, ``env``,
    ``nohup``, ``timeout 5`` ...) with their options."""
    i = 0  # an index, not slices: a command of many assignments stays linear
    while i < len(words):
        name = words[i].rsplit("/", 1)[-1]
        if _ASSIGNMENT.match(words[i]):
            i += 1
        elif name in _WRAPPERS or name == "timeout":
            i += 1
            while i < len(words) and words[i].startswith("-"):
                i += 1
            if name == "timeout" and i < len(words):
                i += 1  # the duration
        else:
            break
    return words[i:]


def _in_place(name: str, args: list[str]) -> bool:
    """``sed -i`` / ``perl -i``: the files after the script are written in place."""
    if name == "sed":
        return any(a == "-i" or a.startswith(("-i", "--in-place")) for a in args)
    return name == "perl" and any(re.match(r"-[plnaw]*i", a) for a in args)


def shell_writes(command: str, *, _depth: int = 0) -> ShellWrites:
    """The writes of ``command`` that can be read from its text (see the module docstring).

    Never raises: an unreadable command gives an empty :class:`ShellWrites`.
    """
    out = ShellWrites()
    text = _without_heredocs(command)
    if len(text) > MAX_COMMAND:
        out.unread = (
            f"the command is {len(text):,} characters long (more than {MAX_COMMAND:,} outside "
            "its here-documents), too long to read before the tool runs"
        )
        return out
    simple = _split(text)
    if simple is None:
        return out
    where: str | None = ""  # the directory ``cd`` moved to, relative; None: unknown
    for raw in simple:
        before = len(out.paths)
        words = _command_words(_redirections(raw, out))
        name = words[0].rsplit("/", 1)[-1] if words else ""
        args = words[1:]
        if name == "cd":
            to = args[0] if args else None
            if to is None or not _plain(to) or to == "-":
                where = None
            elif to.startswith("/"):
                where = to
            elif where is not None:
                where = posixpath.join(where, to)
        elif name in _SHELLS and "-c" in args[:-1] and _depth < 3:
            inner = shell_writes(args[args.index("-c") + 1], _depth=_depth + 1)
            out.paths += inner.paths
            out.changed, out.staged = out.changed or inner.changed, out.staged or inner.staged
            out.pushed = out.pushed or inner.pushed
            out.git = out.git or inner.git
        elif name == "git":
            _git(args, out)
        elif name == "dd":
            out.paths += [a[3:] for a in args if a.startswith("of=") and _plain(a[3:])]
        elif _in_place(name, args):
            files = [a for a in args if not a.startswith("-")]
            out.paths += [f for f in files[1:] if _plain(f)]  # the first is the script
        elif name == "tee":
            out.paths += [a for a in args if not a.startswith("-") and _plain(a)]
        elif name in ("cp", "mv", "install", "ln") and len(args) >= 2:
            target = [a for a in args if not a.startswith("-")]
            if target and _plain(target[-1]):
                into = target[-1]
                if into.endswith("/"):  # into a directory: each source's name there
                    out.paths += [into + posixpath.basename(a.rstrip("/")) for a in target[:-1]]
                else:
                    out.paths.append(into)
                if name == "mv":
                    out.paths += [a for a in target[:-1] if _plain(a)]
        elif name in ("rm", "truncate", "touch"):
            out.paths += [a for a in args if not a.startswith("-") and _plain(a)]
        if where:
            out.paths[before:] = [posixpath.join(where, p) for p in out.paths[before:]]
        elif where is None:  # a directory that cannot be read: its relative paths neither
            out.paths[before:] = [p for p in out.paths[before:] if p.startswith("/")]
    out.paths = list(dict.fromkeys(out.paths))
    return out


def _redirections(words: list[str], out: ShellWrites) -> list[str]:
    """``words`` without their redirections; output targets go to ``out``."""
    kept: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word[:1] in (">", "&") and word not in ("&", "&&") and set(word) <= set(">&|"):
            target = words[i + 1] if i + 1 < len(words) else ""
            fd_copy = word.endswith("&") and (target.isdigit() or target == "-")
            if _plain(target) and not fd_copy:
                out.paths.append(target)
            i += 2
            continue
        if word[:1] == "<" and set(word) <= set("<>-"):
            if word == "<>" and _plain(words[i + 1] if i + 1 < len(words) else ""):
                out.paths.append(words[i + 1])
            i += 2
            continue
        kept.append(word)
        i += 1
    return kept


def _writes_every_change(sub: str, rest: list[str]) -> bool:
    """``git add -A``/``.``, ``git stash [push|save]``, ``git reset --hard``, ``git checkout
    .``, ``git clean -f`` (it deletes the untracked files)."""
    if sub == "add":
        return any(a in ("-A", "--all", ".", ":/") for a in rest)
    if sub == "checkout":
        return any(a in (".", ":/") for a in rest)
    if sub == "clean":
        return any(a == "--force" or (a[:2] != "--" and a[:1] == "-" and "f" in a) for a in rest)
    if sub == "stash":
        return not rest or rest[0] in ("push", "save", "-u", "--include-untracked")
    return sub == "reset" and "--hard" in rest


def _sets_hooks_path(rest: list[str]) -> bool:
    """``git config [set|unset|--unset] core.hooksPath [VALUE]`` (not a read of it)."""
    keys = [i for i, a in enumerate(rest) if a.lower() == "core.hookspath"]
    if not keys:
        return False
    writes = {"set", "unset", "--unset", "--unset-all", "--add", "--replace-all"}
    return bool(writes.intersection(rest)) or len(rest) > keys[0] + 1


def _git(args: list[str], out: ShellWrites) -> None:
    while args and args[0].startswith("-"):  # git -C DIR / -c k=v: options of git itself
        if args[0] == "-c" and args[1:2] and args[1].lower().startswith("core.hookspath"):
            out.hooks_path = True
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
    elif sub == "config" and _sets_hooks_path(rest):
        out.git, out.hooks_path = sub, True
    elif sub in ("rm", "mv"):
        out.git = sub
        out.paths += [p for p in rest if not p.startswith("-") and _plain(p)]
    elif sub == "push":
        out.git, out.pushed = sub, True
