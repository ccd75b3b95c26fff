"""The house rules that import-linter cannot state: no test utility in production code."""

from __future__ import annotations

import ast
from pathlib import Path

import detente

_TEST_UTILITIES = ("starlette.testclient", "fastapi.testclient", "pytest", "unittest.mock")


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_no_production_module_imports_a_test_utility() -> None:
    root = Path(detente.__file__).parent
    offenders = {
        str(path.relative_to(root)): sorted(
            m for m in _imported_modules(path) if m.startswith(_TEST_UTILITIES)
        )
        for path in sorted(root.rglob("*.py"))
    }
    assert {k: v for k, v in offenders.items() if v} == {}
    assert len(offenders) > 100  # the walk really saw the package
