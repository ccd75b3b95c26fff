"""``[harness]`` in detente.toml: one name out of its choices, defaults otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from detente.config import effective, load_config
from detente.errors import ValidationError


def test_the_harness_policy_defaults_to_advise_and_failing_open(tmp_path: Path) -> None:
    config = load_config(tmp_path)

    assert config.harness == {"unclaimed": "advise", "failure": "open"}
    assert effective(config)["harness.unclaimed"] == "advise"


def test_a_chosen_policy_is_read(tmp_path: Path) -> None:
    (tmp_path / "detente.toml").write_text('[harness]\nunclaimed = "require"\nfailure = "closed"\n')

    assert load_config(tmp_path).harness == {"unclaimed": "require", "failure": "closed"}


@pytest.mark.parametrize("value", ['"sometimes"', '["advise"]', "1"])
def test_anything_but_one_of_the_choices_is_refused_naming_the_key(
    tmp_path: Path, value: str
) -> None:
    (tmp_path / "detente.toml").write_text(f"[harness]\nunclaimed = {value}\n")

    with pytest.raises(ValidationError) as refused:
        load_config(tmp_path)

    assert refused.value.field == "harness.unclaimed"
    assert "one of 'advise', 'auto-claim', 'require'" in refused.value.detail
