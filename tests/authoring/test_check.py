"""``check_envs``: the dataset's problems and each env's size, as a run will send it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from authoring.permit_env import ENV, fill, plant_mistakes
from occubench.agent import simulator_prompt
from occubench.authoring import LARGE_PROMPT_TOKENS, check_envs, new_env
from occubench.config import ResolvedRun, RunConfig
from occubench.dataset import CONFIGS_DIR, load_env, reference_suite_dir
from occubench.dataset._errors import json_lines


def test_three_planted_mistakes_are_reported_at_once(tmp_path):
    new_env(tmp_path, ENV, industry="Public Administration", domain="Permits")
    fill(tmp_path)
    plant_mistakes(tmp_path)
    found = check_envs(tmp_path)
    config = tmp_path / CONFIGS_DIR / f"{ENV}.json"
    places = json_lines(config.read_text())
    month = ("action_set_definitions", 1, "parameters", "properties", "month", "type")
    assert [(Path(p.file).name, p.line, p.field) for p in found.problems] == [
        ("eval_benchmark_solvable.jsonl", 1, "checks[0].tool"),
        (config.name, places[month], "action_set_definitions[1].parameters.properties.month.type"),
        (config.name, places[("task_initial_state", "limits")], "task_initial_state.limits"),
    ]
    assert config.read_text().splitlines()[places[month] - 1].strip() == '"type": "str",'
    assert "names tool 'get_discharge_sample'" in found.problems[0].message


def test_each_env_is_sized_as_the_protocol_sends_it(tmp_path):
    for protocol in ("paper", "occubench"):
        config = RunConfig(protocol=protocol)
        found = check_envs(reference_suite_dir(), config)
        assert found.ok and len(found.sizes) == 10
        size = found.sizes[0]
        prompt = simulator_prompt(ResolvedRun.of(config), load_env(reference_suite_dir(), size.env))
        assert size.prompt_chars == len(prompt) and size.prompt_tokens == len(prompt) // 4
        assert size.tools == 3 and size.tasks == 1 and size.tool_tokens > 0


def test_a_simulator_prompt_over_the_bound_is_a_warning(tmp_path):
    root = Path(shutil.copytree(reference_suite_dir(), tmp_path / "suite"))
    path = root / CONFIGS_DIR / "ref_dock_appointment_scheduling.json"
    config = json.loads(path.read_text())
    config["world_model_system_prompt"] += " filler" * (LARGE_PROMPT_TOKENS // 1)
    path.write_text(json.dumps(config))
    found = check_envs(root)
    assert found.ok
    (warning,) = found.warnings
    assert (
        warning.field == "world_model_system_prompt" and "every simulator call" in warning.message
    )
