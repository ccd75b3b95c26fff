"""The local CLI's claim opening without the request model: the same command, the same
answers, the same refusals as the camelCase body validated by ``ClaimIn``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import detente
from detente.client.connect import open_local
from detente.client.inprocess import InProcessClient
from detente.client.seeds import claim_seed, contract_seed
from detente.domain.claims.declared import Declared
from detente.errors import ValidationError
from detente.operations.bodies import ClaimIn
from detente.operations.claim_command import open_command


def _seed(base: str = "0" * 40) -> dict[str, object]:
    return claim_seed(
        repo="repo",
        objective="Make retries idempotent",
        base_commit=base,
        agent="alice",
        session="s-1",
        paths=["src/a.py"],
        modules=["pkg.mod"],
        symbols=["src/a.py::Retry.run"],
        contracts=[
            contract_seed(c) for c in ("http:payments-api:add-retry", "schema:orders", "plain-area")
        ],
        tests=["tests/test_a.py::test_retry"],
        declared=Declared(deployment_responsibility="payments"),
        memory=["AGENTS.md#build", "AGENTS.md#test", "NOTES.md"],
        ttl=600,
    )


def test_a_cli_seed_makes_the_command_the_request_model_makes() -> None:
    seed = {**_seed(), "createWorktree": True, "draft": True}

    assert open_command(seed) == ClaimIn.model_validate(seed).to_command()


def test_a_field_no_seed_has_is_refused() -> None:
    with pytest.raises(ValidationError) as refused:
        open_command({**_seed(), "colour": "blue"})

    assert refused.value.field == "colour"


def test_the_typed_opening_answers_and_refuses_as_the_validated_body_does(repo: Path) -> None:
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()
    client = open_local(repo)
    assert isinstance(client, InProcessClient)
    with client:
        alone = {"modules": [], "symbols": [], "expectedContractChanges": [], "memoryImpacts": []}
        typed = client.open_typed_claim({**_seed(head), **alone, "paths": ["src/typed.py"]})
        checked = client.open_claim({**_seed(head), **alone, "paths": ["src/checked.py"]})
        for opened in (typed, checked):
            assert opened["claim"]["status"] == "active"
            assert opened["claim"]["agent"] == {"id": "alice", "name": "alice", "sessionId": "s-1"}
        drop = ("id", "paths", "createdAt", "updatedAt", "lastEventId", "lease", "fencingToken")
        assert {k: v for k, v in typed["claim"].items() if k not in drop} == {
            k: v for k, v in checked["claim"].items() if k not in drop
        }
        surrogate = {**_seed(head), "objective": "a\ud800b"}
        refusals = []
        for opener in (client.open_typed_claim, client.open_claim):
            with pytest.raises(ValidationError) as refused:
                opener(surrogate)
            refusals.append((refused.value.code, refused.value.field))
        assert refusals == [("validation_error", "objective")] * 2


def test_claim_open_in_local_mode_imports_no_pydantic(repo: Path) -> None:
    # The answer may end the process with os._exit (the parser-free form, fast_reads):
    # report from there too.
    probe = (
        "import os, sys\n"
        "from detente.cli.main import main\n"
        "exit_now = os._exit\n"
        "def reported(code):\n"
        "    print('pydantic' in sys.modules, file=sys.stderr)\n"
        "    sys.stderr.flush()\n"
        "    exit_now(code)\n"
        "os._exit = reported\n"
        "sys.argv = ['detente', 'claim', 'open', '-o', 'x', '-p', 'a.py', '--no-worktree',"
        " '--json']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('pydantic' in sys.modules, file=sys.stderr)\n"
    )
    src = str(Path(detente.__file__).parents[1])  # this checkout's, whatever is installed
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": src},
    )

    assert '"status":"active"' in done.stdout.replace(" ", ""), done.stderr
    assert done.stderr.strip().splitlines()[-1] == "False", done.stderr
