"""Symbols of one source file, found with tree-sitter.

A symbol is a named definition (class, function, method, type, ...) with its qualified
name (enclosing definitions joined by ``.``: ``RetryPolicy.backoff``), its byte range and
its 1-based inclusive line range. Its full name is ``path::Qualified.name``
(see :mod:`detente.domain.overlap.symbols`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from detente.index.languages import Grammar, grammar_for, language_of

__all__ = ["Symbol", "extract_symbols"]


@dataclass(frozen=True, slots=True)
class Symbol:
    """One definition in one file.

    Attributes:
        path: repo-relative file path.
        qualname: enclosing definitions and the name, joined by ``.``.
        kind: ``class``, ``function``, ``method``, ``type``, ``interface``, ...
        start_byte: offset of the definition's first byte (0-based).
        end_byte: offset just past its last byte.
        start_line: first line (1-based).
        end_line: last line (1-based, inclusive).
    """

    path: str
    qualname: str
    kind: str
    start_byte: int
    end_byte: int
    start_line: int
    end_line: int

    @property
    def name(self) -> str:
        """The full symbol name ``path::Qualified.name``."""
        return f"{self.path}::{self.qualname}"

    def to_wire(self) -> dict[str, object]:
        """``{name, path, qualname, kind, startByte, endByte, startLine, endLine}``."""
        return {
            "name": self.name,
            "path": self.path,
            "qualname": self.qualname,
            "kind": self.kind,
            "startByte": self.start_byte,
            "endByte": self.end_byte,
            "startLine": self.start_line,
            "endLine": self.end_line,
        }


def extract_symbols(path: str, source: bytes) -> list[Symbol] | None:
    """Every definition of a source file, in source order.

    Args:
        path: the repo-relative path (its extension picks the grammar).
        source: the file's bytes.

    Returns:
        The symbols (possibly empty), or None when no installed grammar handles ``path``.
        A file with syntax errors still yields the definitions tree-sitter recovered.
    """
    language = language_of(path)
    loaded = grammar_for(language) if language else None
    if loaded is None:
        return None
    grammar, parser = loaded
    tree = parser.parse(source)
    found: list[Symbol] = []
    stack: list[tuple[Any, str]] = [(tree.root_node, "")]
    while stack:
        node, prefix = stack.pop()
        inner = prefix
        kind = grammar.definitions.get(node.type)
        if kind is None and node.type in grammar.value_definitions:
            value = node.child_by_field_name("value")
            if value is not None and value.type in grammar.function_values:
                kind = "function"
        if kind is not None:
            name = _name(node, grammar)
            if name:
                qualname = _qualify(prefix, _receiver(node, grammar), name)
                found.append(
                    Symbol(
                        path=path,
                        qualname=qualname,
                        kind=kind,
                        start_byte=node.start_byte,
                        end_byte=node.end_byte,
                        start_line=node.start_point[0] + 1,
                        end_line=node.end_point[0] + 1,
                    )
                )
                inner = qualname
        elif node.type in grammar.scope_types:
            scope = node.child_by_field_name("type")
            if scope is not None and scope.text:
                inner = _qualify(prefix, None, _bare_type(scope.text.decode("utf-8", "replace")))
        stack.extend((child, inner) for child in reversed(node.named_children))
    found.sort(key=lambda s: (s.start_byte, -s.end_byte))
    return found


def _name(node: Any, grammar: Grammar) -> str | None:
    named = node.child_by_field_name(grammar.name_field)
    if named is None or not named.text:
        return None
    text: str = named.text.decode("utf-8", "replace")
    return text if named.type not in ("string", "template_string") else text.strip("'\"`")


def _receiver(node: Any, grammar: Grammar) -> str | None:
    """The receiver type of a Go method (``func (r *Repo) Get()`` -> ``Repo``)."""
    if node.type not in grammar.receiver_types:
        return None
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return None
    for parameter in receiver.named_children:
        kind = parameter.child_by_field_name("type")
        if kind is not None and kind.text:
            return _bare_type(kind.text.decode("utf-8", "replace"))
    return None


def _bare_type(text: str) -> str:
    """``*Repo`` -> ``Repo``, ``Vec<T>`` -> ``Vec``, ``Repo[T]`` -> ``Repo``."""
    text = text.lstrip("*&").strip()
    for stop in ("<", "[", " "):
        cut = text.find(stop)
        if cut > 0:
            text = text[:cut]
    return text


def _qualify(prefix: str, receiver: str | None, name: str) -> str:
    parts = [p for p in (prefix, receiver, name) if p]
    return ".".join(parts)
