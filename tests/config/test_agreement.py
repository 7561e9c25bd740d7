"""One declaration of a run's settings: the task, the CLI and sweeps agree with RunConfig."""

import inspect

import pytest

from occubench.cli.run import run
from occubench.config import EvalOptions, RunConfig
from occubench.scale import RunSpec, Sweep
from occubench.task import occubench


def cli_defaults() -> dict[str, object]:
    """The ``occubench run`` options: parameter name -> default (typer's OptionInfo)."""
    return {
        name: getattr(param.default, "default", param.default)
        for name, param in inspect.signature(run).parameters.items()
    }


def validated(model, name, value):
    """The field's value when the model is built from ``value`` (how a default is read)."""
    return getattr(model.model_validate({name: value}), name)


def test_task_signature_is_the_run_configuration():
    params = inspect.signature(occubench.__wrapped__).parameters
    assert set(params) == set(RunConfig.model_fields), (
        "the occubench task's parameters and RunConfig's fields differ: "
        f"only in the task: {sorted(set(params) - set(RunConfig.model_fields))}; "
        f"only in RunConfig: {sorted(set(RunConfig.model_fields) - set(params))}"
    )
    for name, param in params.items():
        assert validated(RunConfig, name, param.default) == getattr(RunConfig(), name), name


@pytest.mark.parametrize("model", [RunConfig, EvalOptions])
def test_run_command_has_an_option_per_field(model):
    options = cli_defaults()
    missing = [name for name in model.model_fields if name not in options]
    assert not missing, (
        f"occubench run has no option for these {model.__name__} fields: {missing} "
        "(add a typer option of the same parameter name in occubench/cli/run.py)"
    )
    for name in model.model_fields:
        assert validated(model, name, options[name]) == getattr(model(), name), (
            f"occubench run --{name.replace('_', '-')} defaults to {options[name]!r}, "
            f"{model.__name__}.{name} to {getattr(model(), name)!r}"
        )


def test_sweep_files_can_set_every_field_and_shards_carry_the_configuration():
    assert set(RunConfig.model_fields) <= set(Sweep.model_fields)
    assert RunSpec.model_fields["config"].annotation is RunConfig
    assert RunSpec.model_fields["options"].annotation is EvalOptions
