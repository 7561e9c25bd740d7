"""One declaration per setting: the CLI, the task, sweeps and the docs are made from RunConfig."""

import importlib.util
import inspect
from pathlib import Path
from typing import Any

import pytest
import typer
from pydantic import Field, ValidationError
from typer.testing import CliRunner

from occubench import task as task_module
from occubench.cli._common import from_options
from occubench.cli._settings import setting_parameters, with_settings
from occubench.cli.run import run
from occubench.config import (
    OVERRIDE_NOTE,
    EvalOptions,
    ProtocolPoints,
    RunConfig,
    setting_names,
)
from occubench.errors import UsageError
from occubench.scale import RunSpec, Sweep
from occubench.task import occubench, serve

DOCS_EXTENSION = Path(__file__).parents[2] / "docs" / "_ext" / "occubench_docs.py"


def cli_defaults() -> dict[str, object]:
    """The ``occubench run`` options: parameter name -> default (typer's OptionInfo)."""
    return {
        name: getattr(param.default, "default", param.default)
        for name, param in inspect.signature(run).parameters.items()
    }


def validated(model, name, value):
    """The field's value when the model is built from ``value`` (how a default is read)."""
    return getattr(model.model_validate({name: value}), name)


def docs_extension():
    """The docs' reference generator (``docs/_ext``), imported from its file."""
    pytest.importorskip("sphinx")
    spec = importlib.util.spec_from_file_location("occubench_docs", DOCS_EXTENSION)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Extended(RunConfig):
    """RunConfig with one more setting, as a contributor would add it: one field."""

    new_setting: int = Field(default=7, ge=0, description="A setting added in a test.")


def test_task_signature_is_the_run_configuration():
    params = inspect.signature(occubench).parameters
    named = {n for n, p in params.items() if p.kind is not inspect.Parameter.VAR_KEYWORD}
    assert named == set(RunConfig.model_fields), (
        "the occubench task's parameters and RunConfig's fields differ: "
        f"only in the task: {sorted(named - set(RunConfig.model_fields))}; "
        f"only in RunConfig: {sorted(set(RunConfig.model_fields) - named)}"
    )
    for name in named:
        assert validated(RunConfig, name, params[name].default) == getattr(RunConfig(), name), name
    served = inspect.signature(serve).parameters
    assert set(RunConfig.model_fields) <= set(served) and "transport" in served


@pytest.mark.parametrize("model", [RunConfig, EvalOptions])
def test_run_command_has_an_option_per_field(model):
    options = cli_defaults()
    missing = [name for name in model.model_fields if name not in options]
    assert not missing, f"occubench run has no option for these {model.__name__} fields: {missing}"
    for name in model.model_fields:
        assert validated(model, name, options[name]) == getattr(model(), name), (
            f"occubench run --{name.replace('_', '-')} defaults to {options[name]!r}, "
            f"{model.__name__}.{name} to {getattr(model(), name)!r}"
        )


def test_run_options_are_generated_from_the_fields():
    """run declares only its own options; every field's option is the generator's."""
    generated = [p.name for p in setting_parameters(RunConfig, EvalOptions)]
    names = list(inspect.signature(run).parameters)
    assert names[-len(generated) :] == generated


def test_sweep_files_can_set_every_field_and_shards_carry_the_configuration():
    assert set(RunConfig.model_fields) <= set(Sweep.model_fields)
    assert RunSpec.model_fields["config"].annotation is RunConfig
    assert RunSpec.model_fields["options"].annotation is EvalOptions


def test_protocol_overrides_are_generated_from_the_points():
    for name, point in ProtocolPoints.model_fields.items():
        field = RunConfig.model_fields[name]
        assert field.default is None, name
        assert field.description == f"{point.description} {OVERRIDE_NOTE}", name
        assert validated(RunConfig, name, None) is None
    with pytest.raises(ValidationError, match="max_turns"):
        RunConfig(max_turns=-1)  # the point's bound holds for its override


def test_industries_keep_their_older_name():
    assert RunConfig.model_validate({"categories": "A,B"}).industries == ["A", "B"]
    assert RunConfig(industries="A").model_dump()["industries"] == ["A"]
    assert "categories" not in RunConfig().model_dump()  # logs are written with the new name
    assert setting_names(RunConfig)["categories"] == "industries"
    with pytest.raises(ValidationError, match="name the same setting"):
        RunConfig.model_validate({"categories": "A", "industries": "B"})


def test_unknown_task_parameters_are_refused_with_the_nearest_name():
    with pytest.raises(UsageError, match=r"env_mod \(did you mean env_mode\?\)"):
        task_module.run_config("occubench", {"env_mod": "E1"})


def test_a_new_run_setting_needs_no_other_edit(monkeypatch):
    # the command line: a command taking the settings gets an option for the new field
    @with_settings(Extended)
    def command(**settings: Any) -> None:
        typer.echo(from_options(Extended, settings).new_setting)

    app = typer.Typer(rich_markup_mode=None)  # plain help, as occubench's
    app.command()(command)
    app.command(name="other")(lambda: None)
    shown = CliRunner().invoke(app, ["command", "--help"], terminal_width=200)
    assert "--new-setting" in shown.output and "A setting added in a test." in shown.output
    given = CliRunner().invoke(app, ["command", "--new-setting", "3"])
    assert given.exit_code == 0 and given.output.strip() == "3"
    refused = CliRunner().invoke(app, ["command", "--new-setting", "-1"])
    assert refused.exit_code != 0

    # the task: its signature and its validation follow RunConfig
    monkeypatch.setattr(task_module, "RunConfig", Extended)

    def task_function(**config: Any) -> Any:
        return config

    params = inspect.signature(task_module.takes_run_config(task_function)).parameters
    assert params["new_setting"].default == 7
    assert task_module.run_config("occubench", {"new_setting": 3}).new_setting == 3

    # the docs: the settings reference and the command reference
    docs = docs_extension()
    rows = docs.settings_rows(Extended)
    row = next(r for r in rows if r[0] == "``new_setting``")
    assert row[2] == "7" and "A setting added in a test" in row[3]
    assert any("--new-setting" in line for line in docs.command_reference(app, "x"))
