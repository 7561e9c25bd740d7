"""A new profession written the way a person would: the skeleton of ``env new``, filled in.

``fill`` writes a complete wastewater-permit-review env and task over the skeleton;
``plant_mistakes`` makes three mistakes in two files (a check naming a tool that does not
exist, a state field with no description, a tool argument of a type JSON Schema lacks).
"""

from __future__ import annotations

import json
from pathlib import Path

ENV = "wastewater_permit_review"
SAMPLES = {
    "permit_id": "WP-2207",
    "month": "2025-05",
    "samples": [
        {"parameter": "BOD5", "mg_l": 22.0},
        {"parameter": "TSS", "mg_l": 41.0},
        {"parameter": "ammonia_n", "mg_l": 3.1},
    ],
}
LIMITS = {"permit_id": "WP-2207", "parameter": "TSS", "monthly_avg_mg_l": 30.0}
PERMIT = {
    "permit_id": "WP-2207",
    "facility": "Riverside Municipal WWTP",
    "status": "active",
    "expires_on": "2026-03-31",
}


def _tool(name: str, description: str, properties: dict, example: dict) -> dict:
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": properties, "required": list(properties)},
        "example_output": example,
    }


def env_config() -> dict:
    """The env, filled in."""
    permit_id = {"type": "string", "description": "Permit number, e.g. WP-1001."}
    return {
        "environment_name": ENV,
        "world_model_system_prompt": (
            "You simulate the permit and monitoring records system of a state environmental "
            "agency, used by reviewers of wastewater discharge permits. Answer each action with "
            "the observation the real system would return, consistent with the state below and "
            "with earlier observations. Unknown identifiers get a structured error such as "
            '{"error": {"code": "NOT_FOUND", "message": "..."}}; never invent records.'
        ),
        "action_set_definitions": [
            _tool(
                "get_permit",
                "A discharge permit's holder, status and expiry.",
                {"permit_id": permit_id},
                PERMIT,
            ),
            _tool(
                "get_discharge_samples",
                "Laboratory results of a permit's effluent samples for one month.",
                {
                    "permit_id": permit_id,
                    "month": {
                        "type": "string",
                        "description": "Month as YYYY-MM.",
                        "pattern": "^[0-9]{4}-[0-9]{2}$",
                    },
                },
                SAMPLES,
            ),
            _tool(
                "get_effluent_limits",
                "The permit's monthly average limit for one parameter.",
                {
                    "permit_id": permit_id,
                    "parameter": {
                        "type": "string",
                        "enum": ["BOD5", "TSS", "ammonia_n"],
                        "description": "The pollutant parameter.",
                    },
                },
                LIMITS,
            ),
        ],
        "task_initial_state": {"permit": PERMIT, "samples": SAMPLES, "limits": [LIMITS]},
        "state_description": {
            "permit": "The permit record.",
            "samples": "The May 2025 laboratory results, one entry per parameter.",
            "limits": "Monthly average limits by parameter.",
        },
    }


def task(task_id: int = 1) -> dict:
    """The task, filled in."""
    return {
        "task_id": task_id,
        "difficulty_level": 1,
        "task_scenario_name": "Wastewater Permit Review",
        "agent_instruction": (
            "Review permit WP-2207 for May 2025: find its measured total suspended solids (TSS) "
            "and its monthly TSS limit, and say whether the permit is in exceedance."
        ),
        "env_name": ENV,
        "verification_plan": (
            "The answer must report TSS 41.0 mg/L, a limit of 30.0 mg/L and an exceedance, each "
            "read from get_discharge_samples and get_effluent_limits observations; values not "
            "observed mean FAILURE."
        ),
        "checks": [
            {
                "kind": "tool_called",
                "tool": "get_discharge_samples",
                "arguments": {"permit_id": "WP-2207"},
            },
            {"kind": "answer_contains", "values": ["41.0", "30.0"]},
        ],
    }


def fill(root: Path) -> None:
    """Write the filled env and task over the skeleton ``env new`` made in ``root``."""
    config = root / "world_model_configs" / f"{ENV}.json"
    config.write_text(json.dumps(env_config(), indent=2) + "\n")
    (root / "eval_benchmark_solvable.jsonl").write_text(json.dumps(task()) + "\n")


def plant_mistakes(root: Path) -> None:
    """Three mistakes: a check's tool misspelt, a state field undescribed, a type unknown."""
    line = task()
    line["checks"][0]["tool"] = "get_discharge_sample"
    (root / "eval_benchmark_solvable.jsonl").write_text(json.dumps(line) + "\n")
    config = env_config()
    del config["state_description"]["limits"]
    config["action_set_definitions"][1]["parameters"]["properties"]["month"]["type"] = "str"
    (root / "world_model_configs" / f"{ENV}.json").write_text(json.dumps(config, indent=2) + "\n")
