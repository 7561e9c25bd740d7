"""Generation settings per role: checked once, for the command's options and sweep files."""

import pytest
import yaml
from pydantic import ValidationError

from conftest import RELEASE_DIR
from occubench.config import checked_generate
from occubench.errors import UsageError
from occubench.roles import Role
from occubench.scale import expand_sweep, load_sweep


def budget(tokens: int) -> dict[str, int]:
    return {"reasoning_tokens": tokens}


def test_a_thinking_budget_is_one_token_or_more():
    assert checked_generate({"reasoning_tokens": 1}).reasoning_tokens == 1
    for bad in (0, -4096):
        with pytest.raises(UsageError, match=f"reasoning_tokens must be 1 or more, not {bad}"):
            checked_generate({"reasoning_tokens": bad})


def test_sweep_files_take_reasoning_tokens_per_role(tmp_path):
    sweep = {
        "name": "budgets",
        "dataset": str(RELEASE_DIR),
        "agents": [
            {"model": "occubench/careful", "generate": budget(4096)},
            {"model": "occubench/schema-agent", "generate": budget(16384)},
        ],
        "simulators": [
            {"model": "occubench/echo-simulator", "generate": {"reasoning_tokens": 2048}}
        ],
        "verifiers": [
            {"model": "occubench/scripted-judge", "generate": {"reasoning_tokens": 1024}}
        ],
    }
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(sweep))
    runs = expand_sweep(load_sweep(path))
    assert [r.generate_config(Role.AGENT).reasoning_tokens for r in runs] == [4096, 16384]
    assert {r.generate_config(Role.SIMULATOR).reasoning_tokens for r in runs} == {2048}
    assert {r.generate_config(Role.VERIFIER).reasoning_tokens for r in runs} == {1024}
    assert len({r.key() for r in runs}) == 2  # two budgets, two log folders

    sweep["agents"] = [{"model": "occubench/careful", "generate": budget(0)}]
    path.write_text(yaml.safe_dump(sweep))
    with pytest.raises(ValidationError, match="reasoning_tokens must be 1 or more"):
        load_sweep(path)
