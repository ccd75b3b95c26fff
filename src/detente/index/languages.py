"""Which tree-sitter grammar parses which file, and which nodes define symbols.

Grammars come from the per-language wheels (``tree-sitter-python``, ``-javascript``,
``-typescript``, ``-go``, ``-rust``, ``-java``), each a compiled binding shipped on PyPI:
nothing is compiled at install time and nothing is downloaded at run time (unlike
``tree-sitter-language-pack``). A wheel that is not installed simply leaves its files
unindexed; :func:`available` says which languages loaded.

A :class:`Grammar` lists the node types that define a symbol and, for each, the field
holding its name. Definitions nest: a method inside a class becomes ``Class.method``.
Two shapes need more than a name field and are described by ``receiver_types`` (Go
methods, named after their receiver's type) and ``scope_types`` (Rust ``impl`` blocks:
not a symbol themselves, but their functions are ``Type.fn``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

__all__ = ["Grammar", "available", "grammar_for", "language_of"]


@dataclass(frozen=True)
class Grammar:
    """How to find definitions in one language.

    Attributes:
        name: the language, e.g. ``"python"``.
        module: the grammar wheel's import name, e.g. ``"tree_sitter_python"``.
        entry: the function of ``module`` returning the language pointer.
        definitions: node type -> symbol kind (``class``, ``function``, ...).
        name_field: the field naming a definition (``name`` in every grammar here).
        receiver_types: node types whose qualified name is ``Receiver.name`` (Go).
        scope_types: node types that are no symbol but qualify their children by the
            text of their ``type`` field (Rust ``impl``).
        value_definitions: declarator node types that define a symbol only when their
            ``value`` is a function (``const f = () => ...`` in JS/TS).
    """

    name: str
    module: str
    entry: str
    definitions: dict[str, str]
    name_field: str = "name"
    receiver_types: frozenset[str] = frozenset()
    scope_types: frozenset[str] = frozenset()
    value_definitions: frozenset[str] = frozenset()
    function_values: frozenset[str] = field(
        default_factory=lambda: frozenset({"arrow_function", "function_expression", "function"})
    )


_JS_DEFINITIONS = {
    "class_declaration": "class",
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "method_definition": "method",
}
_TS_DEFINITIONS = {
    **_JS_DEFINITIONS,
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
    "abstract_method_signature": "method",
    "internal_module": "module",
}

_GRAMMARS: dict[str, Grammar] = {
    "python": Grammar(
        "python",
        "tree_sitter_python",
        "language",
        {"class_definition": "class", "function_definition": "function"},
    ),
    "javascript": Grammar(
        "javascript",
        "tree_sitter_javascript",
        "language",
        _JS_DEFINITIONS,
        value_definitions=frozenset({"variable_declarator"}),
    ),
    "typescript": Grammar(
        "typescript",
        "tree_sitter_typescript",
        "language_typescript",
        _TS_DEFINITIONS,
        value_definitions=frozenset({"variable_declarator"}),
    ),
    "tsx": Grammar(
        "tsx",
        "tree_sitter_typescript",
        "language_tsx",
        _TS_DEFINITIONS,
        value_definitions=frozenset({"variable_declarator"}),
    ),
    "go": Grammar(
        "go",
        "tree_sitter_go",
        "language",
        {"function_declaration": "function", "method_declaration": "method", "type_spec": "type"},
        receiver_types=frozenset({"method_declaration"}),
    ),
    "rust": Grammar(
        "rust",
        "tree_sitter_rust",
        "language",
        {
            "function_item": "function",
            "function_signature_item": "function",
            "struct_item": "struct",
            "enum_item": "enum",
            "trait_item": "trait",
            "mod_item": "module",
            "type_item": "type",
        },
        scope_types=frozenset({"impl_item"}),
    ),
    "java": Grammar(
        "java",
        "tree_sitter_java",
        "language",
        {
            "class_declaration": "class",
            "interface_declaration": "interface",
            "enum_declaration": "enum",
            "record_declaration": "class",
            "method_declaration": "method",
            "constructor_declaration": "method",
        },
    ),
}

_EXTENSIONS = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
}


def language_of(path: str) -> str | None:
    """The language of a repo-relative path by its extension, or None when unsupported."""
    dot = path.rfind(".")
    if dot < 0 or "/" in path[dot:]:
        return None
    return _EXTENSIONS.get(path[dot:].lower())


@cache
def grammar_for(language: str) -> tuple[Grammar, Any] | None:
    """The grammar description and a ready ``tree_sitter.Parser`` for a language.

    Returns:
        ``(grammar, parser)``, or None when the language is unknown or its wheel (or
        ``tree-sitter`` itself) is not installed.
    """
    grammar = _GRAMMARS.get(language)
    if grammar is None:
        return None
    try:
        import tree_sitter

        module = importlib.import_module(grammar.module)
    except ImportError:
        return None
    entry: Callable[[], object] = getattr(module, grammar.entry)
    parser = tree_sitter.Parser(tree_sitter.Language(entry()))
    return grammar, parser


def available() -> list[str]:
    """Languages whose grammar wheel loaded, sorted."""
    return sorted(name for name in _GRAMMARS if grammar_for(name) is not None)
