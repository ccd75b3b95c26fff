"""The snapshot version: a digest of the fold's sources, the same in every process."""

from __future__ import annotations

import hashlib
from pathlib import Path

import detente
from detente.eventlog.snapshots import SNAPSHOT_FORMAT, snapshot_version


def test_the_version_digests_every_fold_source_path_and_bytes_in_path_order() -> None:
    package = Path(detente.__file__).resolve().parent
    sources = sorted((package / "domain").rglob("*.py"))  # an oracle through pathlib
    sources.append(package / "eventlog" / "upcasting.py")
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.relative_to(package).as_posix().encode() + b"\0")
        digest.update(source.read_bytes() + b"\0")

    assert len(sources) > 50  # every module of the domain, nested packages included
    assert snapshot_version() == f"{SNAPSHOT_FORMAT}-{digest.hexdigest()[:16]}"
