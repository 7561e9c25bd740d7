"""The agent-program recipes of the docs (``docs/guide/agents/*.py``), run as shipped.

Each recipe is run by ``occubench run --agent-command`` on a reference task with a
scripted agent model (``occubench/careful``) behind the bridge: the sample is graded
(passed, the answer submitted), each of the program's generations is an Inspect model
call of the agent model whose wire and tokens are in the sample's store (the same tokens
as the agent role's), and the report prices the agent's tokens by the agent model. Two
programs on the same agent model stand side by side in one report. A program in a
sandbox of its own (``unshare``: new user and PID namespaces; bubblewrap: a read-only
system, a /tmp of its own with the program's folders bound back, and every namespace but
the network's) reaches the endpoint as well, where the machine has the tool and lets it
make namespaces (``BWRAP`` names bubblewrap's executable when it is not on PATH). Paths
go into commands quoted, so a clone anywhere (under /tmp, in a folder with a space) runs
them. Claude Code and Codex
(npm) run their recipes (``run_claude.sh``, ``run_codex.sh``) under the opt-in marker
``agent_cli``: ``CLAUDE`` and ``CODEX`` name the executables (else ``claude`` and ``codex``
on PATH; one not found is skipped). Claude Code runs its recipe on a thinking model too
(the strict local Anthropic server as ``anthropic/...``, a thinking budget): it drops the
thinking blocks of a model it does not know, and the bridge restores them.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessage
from inspect_ai.tool import ToolInfo
from typer.testing import CliRunner

from occubench.analysis import costs, wire_use
from occubench.cli import app
from occubench.costs import ModelPrice, PriceTable
from occubench.providers import Wire
from occubench.report import build_report, render_html, report_tables
from occubench.results import SampleRow, Trajectory, read_runs
from occubench.scripted import BEHAVIOURS, Reply
from occubench.scripted._namespaced import ServerNames
from occubench.serving import BridgedCall
from occubench.testing import AnthropicServer
from serving.agent_runs import run_args

CLONE = Path(__file__).parents[2]
RECIPES = CLONE / "docs" / "guide" / "agents"
AGENT_MODEL = "occubench/careful"
THINKING_MODEL = "claude-sonnet-4-5"
"""The thinking model the strict local Anthropic server serves (as the careful agent)."""
PRICES = PriceTable(
    models={
        AGENT_MODEL: ModelPrice(input_per_mtok=3.0, output_per_mtok=15.0),
        f"anthropic/{THINKING_MODEL}": ModelPrice(input_per_mtok=3.0, output_per_mtok=15.0),
        "occubench/canned": ModelPrice(input_per_mtok=1.0, output_per_mtok=5.0),
    }
)
SANDBOX = "unshare --user --map-root-user --pid --fork --kill-child --mount-proc"
"""The sandbox of the docs' recipe: the program's own user and PID namespaces."""
BWRAP_OPTIONS = (
    "--ro-bind / / --dev /dev --proc /proc --tmpfs /tmp "
    "--ro-bind {instruction_file} {instruction_file} {program_dirs} "
    "--unshare-all --share-net --die-with-parent"
)
"""The bubblewrap sandbox of the docs: a read-only system, a /tmp of its own (the
instruction file and the program's folders bound back into it, read-only), every
namespace its own but the network's."""
PROGRAM_DIRS = sorted(
    d for d in {str(CLONE), sys.prefix, sys.base_prefix} if not Path("/tmp").is_relative_to(d)
)
"""The folders a recipe runs from: this clone (the recipes, the package's source) and the
interpreter's environment and installation, any of them maybe under /tmp (a folder that
holds /tmp itself left out: bound back, it would undo the private /tmp)."""
runner = CliRunner()


def program(recipe: str) -> str:
    """The recipe's command line, its paths quoted."""
    name, *args = recipe.split()
    return shlex.join([sys.executable, str(RECIPES / name), *args])


def run_recipe(
    log_dir: Path, command: str, agent_model: str = AGENT_MODEL, *settings: str
) -> SampleRow:
    """``command`` run on reference task 1001 in E1, its model ``agent_model`` (``settings``)."""
    args = run_args(
        log_dir,
        "--tasks",
        "1001",
        "--env-mode",
        "E1",
        "--agent-time-limit",
        "300",
        "--agent-model",
        agent_model,
        *settings,
        "--agent-command",
        command,
    )
    result = runner.invoke(app, args, terminal_width=200)
    assert result.exit_code == 0, result.output
    (row,) = read_runs([log_dir])
    return row


def assert_graded_and_counted(
    row: SampleRow, wire: Wire, answer: str = "submitted", agent_model: str = AGENT_MODEL
) -> None:
    """Passed on an ``answer`` (its source); every generation on ``wire``, streamed, counted."""
    sample = read_eval_log(row.log).samples[0]
    program_run = sample.store["ServedSession:program"]
    assert row.error is None and row.passed is True, program_run["stderr_tail"]
    assert sample.store["ServedSession:answer_source"] == answer
    generations = [e for e in sample.events if e.event == "model" and e.model == agent_model]
    (used,) = row.agent_wires
    assert used.wire == wire.value
    assert used.calls == used.streamed == len(generations) > 1
    assert used.input_tokens + used.output_tokens == row.tokens["agent"]
    assert row.agent_model_name == agent_model
    (cost,) = costs([row], PRICES)
    assert cost.cost is not None and cost.cost > 0 and cost.unpriced_models == []


RECIPE_WIRES = {
    "sdk_agent.py messages": Wire.ANTHROPIC,
    "sdk_agent.py chat": Wire.OPENAI_CHAT,
    "sdk_agent.py responses": Wire.OPENAI_RESPONSES,
    "agents_sdk_agent.py responses": Wire.OPENAI_RESPONSES,
    "agents_sdk_agent.py chat": Wire.OPENAI_CHAT,
    "pydantic_ai_agent.py": Wire.ANTHROPIC,
}


@pytest.fixture(scope="module")
def recipe_rows(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SampleRow]:
    """Each recipe run once (the tests below read the rows)."""
    logs = tmp_path_factory.mktemp("recipes")
    return {
        recipe: run_recipe(logs / recipe.replace(" ", "-"), program(recipe))
        for recipe in RECIPE_WIRES
    }


@pytest.mark.parametrize("recipe", list(RECIPE_WIRES))
def test_each_recipe_is_graded_and_its_model_use_counted_by_wire(recipe_rows, recipe):
    assert_graded_and_counted(recipe_rows[recipe], RECIPE_WIRES[recipe])


def test_two_programs_on_the_same_agent_model_side_by_side_in_one_report(recipe_rows):
    rows = [recipe_rows["sdk_agent.py messages"], recipe_rows["agents_sdk_agent.py responses"]]
    report = build_report(rows, prices=PRICES)
    assert report.agents == sorted(r.agent_model for r in rows)
    assert all(f"[{AGENT_MODEL}]" in agent for agent in report.agents)
    assert [c.cost is not None and c.unpriced_models == [] for c in report.costs] == [True, True]
    assert {(w.agent, w.wire) for w in report.agent_wires} == {
        (rows[0].agent_model, Wire.ANTHROPIC.value),
        (rows[1].agent_model, Wire.OPENAI_RESPONSES.value),
    }
    assert wire_use(rows) == report.agent_wires
    titles = [t.title for t in report_tables(report)]
    assert any(title.startswith("Agent tokens by wire") for title in titles)
    page = render_html(report, rows, [Trajectory()] * len(rows), {})
    assert "Agent tokens by wire" in page
    assert f"<td>{Wire.OPENAI_RESPONSES.value}</td>" in page


def sandbox_command(kind: str) -> str | None:
    """The docs' sandbox of ``kind`` as a command prefix, if this machine can make one."""
    if kind == "unshare":
        prefix = SANDBOX if shutil.which("unshare") else None
    else:  # bubblewrap: BWRAP names it where it is not on PATH
        bwrap = shutil.which(os.environ.get("BWRAP", "bwrap"))
        binds = " ".join(f"--ro-bind {shlex.quote(d)} {shlex.quote(d)}" for d in PROGRAM_DIRS)
        options = BWRAP_OPTIONS.replace("{program_dirs}", binds)
        prefix = f"{shlex.quote(bwrap)} {options}" if bwrap else None
    if prefix is None:
        return None
    trial = shlex.split(prefix.replace("{instruction_file}", shlex.quote(__file__)))
    tried = subprocess.run([*trial, "true"], capture_output=True, check=False)
    return prefix if tried.returncode == 0 else None


SANDBOXES = {kind: sandbox_command(kind) for kind in ("unshare", "bwrap")}
"""Each sandbox of the docs as a command prefix, None where this machine cannot make it."""


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param(
            kind,
            marks=pytest.mark.skipif(
                prefix is None,
                reason=f"{kind} cannot make a sandbox here (not installed, or user namespaces "
                "are not allowed); .ci/run installs bubblewrap",
            ),
        )
        for kind, prefix in SANDBOXES.items()
    ],
)
def test_a_recipe_in_a_sandbox_of_its_own_reaches_the_endpoint(tmp_path, kind):
    """The shared network namespace keeps 127.0.0.1 (the endpoint and the bridge) in reach."""
    prefix = SANDBOXES[kind]
    assert prefix is not None
    row = run_recipe(tmp_path, f"{prefix} {program('sdk_agent.py chat')}")
    assert_graded_and_counted(row, Wire.OPENAI_CHAT)
    argv = read_eval_log(row.log).samples[0].store["ServedSession:program"]["argv"]
    assert Path(argv[0]).name == kind


def cli_path(variable: str) -> str | None:
    """The coding agent's executable: ``$VARIABLE``, else its name on PATH (None: absent)."""
    return shutil.which(os.environ.get(variable, variable.lower()))


def cli_param(variable: str, script: str, wire: Wire, name: str) -> Any:
    """One CLI's case, skipped with the reason where the CLI is not installed."""
    absent = pytest.mark.skipif(
        cli_path(variable) is None,
        reason=f"{variable.lower()} is not installed: npm install it and set {variable} to "
        "its path (opt-in: -m agent_cli)",
    )
    return pytest.param(variable, script, wire, id=name, marks=absent)


@pytest.mark.agent_cli
@pytest.mark.parametrize(
    ("variable", "script", "wire"),
    [
        cli_param("CLAUDE", "run_claude.sh", Wire.ANTHROPIC, "claude-code"),
        cli_param("CODEX", "run_codex.sh", Wire.OPENAI_RESPONSES, "codex"),
    ],
)
def test_the_coding_agent_clis_run_their_recipes_offline(
    tmp_path, monkeypatch, variable, script, wire
):
    """The CLI's own loop and tools, the env's MCP tools, its model through the bridge."""
    executable = cli_path(variable)
    assert executable is not None
    monkeypatch.setenv(variable, executable)  # the script runs it
    row = run_recipe(tmp_path, shlex.join(["sh", str(RECIPES / script)]))
    assert_graded_and_counted(row, wire, answer="stdout")  # it answers in its last line


def careful(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """The careful agent on Claude Code's ``mcp__occubench__<tool>`` names, as the scripted
    provider answers them (``occubench.scripted``)."""
    names = ServerNames(tools)
    seen, offered = names.plain(messages, tools)
    return names.declared_calls(BEHAVIOURS["careful"](seen, offered))


@pytest.mark.agent_cli
@pytest.mark.skipif(
    cli_path("CLAUDE") is None,
    reason="claude is not installed: npm install it and set CLAUDE to its path "
    "(opt-in: -m agent_cli)",
)
def test_claude_code_on_a_thinking_model_is_graded(tmp_path, monkeypatch):
    """The thinking blocks Claude Code drops are restored by the bridge, turn by turn."""
    executable = cli_path("CLAUDE")
    assert executable is not None
    monkeypatch.setenv("CLAUDE", executable)
    with AnthropicServer(behaviours={THINKING_MODEL: careful}, api_keys=["test-key"]) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)  # Inspect's, not the CLI's
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        model = f"anthropic/{THINKING_MODEL}"
        thinking = ("--reasoning-tokens", "agent=2048")
        row = run_recipe(tmp_path, f"sh {RECIPES / 'run_claude.sh'}", model, *thinking)
        assert server.refused == []
    assert_graded_and_counted(row, Wire.ANTHROPIC, answer="stdout", agent_model=model)
    sample = read_eval_log(row.log).samples[0]
    calls = [BridgedCall.model_validate(c) for c in sample.store["ServedSession:calls"]]
    assert sum(c.restored_reasoning for c in calls) > 0  # Claude Code dropped them
