"""Synthesis: from a scenario catalog to a calibrated, solvable dataset.

Each stage is a function with typed input and output and a prompt file in
``prompts/``; ``run_synthesis`` runs them all, resumably, and writes the dataset.
``convert_dataset`` turns a dataset's tasks into conversational variants (a user brief
plus a shorter opening request).
"""

from occubench.synthesis._artifacts import ArtifactStore, StageResult, TokenUsage
from occubench.synthesis._catalog import Catalog, CatalogError, CatalogScenario, load_catalog
from occubench.synthesis._converse import (
    CONVERSION_FILE,
    Conversion,
    ConversionManifest,
    ConvertedTask,
    Outcome,
    check_conversion,
    conversational_task,
    convert_dataset,
    convert_task,
)
from occubench.synthesis._env import generate_env
from occubench.synthesis._generate import generate_json, parse_reply
from occubench.synthesis._manifest import (
    MANIFEST_FILE,
    Drop,
    DropStage,
    Manifest,
    ScenarioFunnel,
    SelectedTask,
    SynthesisSettings,
    funnel_tables,
)
from occubench.synthesis._pipeline import (
    DATASET_DIR,
    NoProgress,
    Progress,
    SynthesisModels,
    run_synthesis,
)
from occubench.synthesis._prompts import render_prompt
from occubench.synthesis._records import DIFFICULTY_LEVELS, TaskDraft
from occubench.synthesis._repair import Diagnosis, Repair, RepairPatch, repair_instance
from occubench.synthesis._request import catalog_scenarios, synthesis_models
from occubench.synthesis._runs import Candidate, RunModels, RunOutcome, run_candidates
from occubench.synthesis._select import LevelRate, Selection, pool_levels, select_difficulty
from occubench.synthesis._subtopics import ReferenceDocument, ScenarioPlan, Subtopic, plan_scenario
from occubench.synthesis._tasks import TaskSet, generate_tasks
from occubench.synthesis._validate import validate_env, validate_instance, validate_task

__all__ = [
    "catalog_scenarios",
    "synthesis_models",
    "CONVERSION_FILE",
    "Conversion",
    "ConversionManifest",
    "ConvertedTask",
    "Outcome",
    "check_conversion",
    "conversational_task",
    "convert_dataset",
    "convert_task",
    "DATASET_DIR",
    "DIFFICULTY_LEVELS",
    "MANIFEST_FILE",
    "ArtifactStore",
    "Candidate",
    "Catalog",
    "CatalogError",
    "CatalogScenario",
    "Diagnosis",
    "Drop",
    "DropStage",
    "LevelRate",
    "Manifest",
    "NoProgress",
    "Progress",
    "ReferenceDocument",
    "Repair",
    "RepairPatch",
    "RunModels",
    "RunOutcome",
    "ScenarioFunnel",
    "ScenarioPlan",
    "SelectedTask",
    "Selection",
    "StageResult",
    "Subtopic",
    "SynthesisModels",
    "SynthesisSettings",
    "TaskDraft",
    "TaskSet",
    "TokenUsage",
    "funnel_tables",
    "generate_env",
    "generate_json",
    "generate_tasks",
    "load_catalog",
    "parse_reply",
    "plan_scenario",
    "pool_levels",
    "render_prompt",
    "repair_instance",
    "run_candidates",
    "run_synthesis",
    "select_difficulty",
    "validate_env",
    "validate_instance",
    "validate_task",
]
