import gc
import os
import subprocess
import sys

from inspect_ai.event import ModelEvent
from inspect_ai.log import read_eval_log

from conftest import REFERENCE_MODEL_ARGS
from occubench.defaults import DEFAULT_GC_THRESHOLDS, DEFAULT_TRACE_LEVEL
from occubench.scale._interpreter import (
    expect_samples,
    sample_finished,
    sample_started,
    tuned_gc,
    warm_model_data,
)


def test_tuned_gc_freezes_and_restores():
    before = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    with tuned_gc():
        assert gc.get_threshold() == DEFAULT_GC_THRESHOLDS
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_tuned_gc_restores_after_an_error():
    before = gc.get_threshold()
    try:
        with tuned_gc((5000, 20, 20)):
            assert gc.get_threshold() == (5000, 20, 20)
            raise RuntimeError("eval failed")
    except RuntimeError:
        pass
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_finished_samples_are_collected_until_every_sample_has_started():
    with tuned_gc():
        expect_samples(6)
        for _ in range(4):
            sample_started()
        collected = [sample_finished(every=2) for _ in range(4)]
        assert collected == [False, True, False, True]  # samples still to start
        sample_started()
        sample_started()  # every sample has started: no pause for memory no sample will take
        assert [sample_finished(every=2) for _ in range(4)] == [False, False, False, False]


def test_an_eval_of_unknown_size_is_collected_as_before():
    with tuned_gc():
        sample_started()
        assert [sample_finished(every=2) for _ in range(2)] == [False, True]
    assert not sample_finished(every=1)  # outside the tuned block: CPython's own collector


def test_the_model_database_is_read_before_workers_are_forked(monkeypatch):
    from inspect_ai.model import _model_info

    monkeypatch.setattr(_model_info, "_model_info_cache", None)
    looked_up = dict(_model_info._result_cache)
    warm_model_data()
    assert _model_info._model_info_cache  # read once here, shared by every fork
    assert _model_info._result_cache == looked_up  # no model's information looked up


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_exit_now_runs_exit_handlers_and_flushes(tmp_path):
    marker = tmp_path / "handler-ran"
    done = run_python(
        "import atexit, pathlib, sys; from occubench.scale._interpreter import exit_now; "
        f"atexit.register(lambda: pathlib.Path({str(marker)!r}).write_text('yes')); "
        "sys.stdout.write('buffered, no newline'); exit_now(3)"
    )
    assert done.returncode == 3
    assert done.stdout == "buffered, no newline"
    assert marker.read_text() == "yes"


def test_exit_now_takes_sys_exit_codes():
    assert (
        run_python("from occubench.scale._interpreter import exit_now; exit_now(None)").returncode
        == 0
    )
    done = run_python("from occubench.scale._interpreter import exit_now; exit_now('bad input')")
    assert (done.returncode, done.stderr.strip()) == (1, "bad input")


def test_lean_inspect_sets_the_trace_level_and_leaves_snapshots_out(monkeypatch):
    from inspect_ai.model import _call_tools, _model
    from inspect_ai.tool import _tool_def

    from occubench.scale._interpreter import (
        TRACE_LEVEL_ENV,
        _live_messages,
        _ToolDefinitions,
        lean_inspect,
    )

    monkeypatch.delenv(TRACE_LEVEL_ENV, raising=False)
    snapshot, fields = _model._snapshot_messages, _call_tools.tool_def_fields
    with lean_inspect():
        assert os.environ[TRACE_LEVEL_ENV] == DEFAULT_TRACE_LEVEL
        assert _model._snapshot_messages is _live_messages
        cached = _call_tools.tool_def_fields
        assert isinstance(cached, _ToolDefinitions) and _tool_def.tool_def_fields is cached
        with lean_inspect():  # nested: nothing changes, nothing is undone early
            assert _call_tools.tool_def_fields is cached
        assert _model._snapshot_messages is _live_messages
        assert _call_tools.tool_def_fields is cached
    assert _model._snapshot_messages is snapshot
    assert _call_tools.tool_def_fields is fields and _tool_def.tool_def_fields is fields
    assert TRACE_LEVEL_ENV not in os.environ
    monkeypatch.setenv(TRACE_LEVEL_ENV, "info")  # the environment's choice wins
    with lean_inspect():
        assert os.environ[TRACE_LEVEL_ENV] == "info"
    assert os.environ[TRACE_LEVEL_ENV] == "info"


def test_tool_definitions_are_derived_once_per_tool():
    from occubench.scale._interpreter import _ToolDefinitions

    def make_tool():  # a tool made at run time, as the agent makes one per sample
        async def lookup(order_id: str) -> str:
            return order_id

        return lookup

    derived = []
    cache = _ToolDefinitions(
        lambda tool: derived.append(getattr(tool, "__name__", tool)) or ("fields",)
    )
    tool = make_tool()
    results = [cache(tool), cache(tool), cache(make_tool())]
    assert results == [("fields",)] * 3
    assert derived == ["lookup", "lookup"]  # the second tool is another object
    del tool, results
    gc.collect()
    assert len(cache.known) == 0  # the tools are gone: so are their entries
    assert cache(1) == ("fields",) and cache(1) == ("fields",)  # not weakly referenceable
    assert len(derived) == 4


def test_lean_inspect_keeps_snapshots_with_another_inspect(monkeypatch, caplog):
    from inspect_ai.model import _call_tools, _model

    from occubench.scale import _interpreter as interpreter

    monkeypatch.setattr(interpreter, "version", lambda name: "0.0.1")
    snapshot, fields = _model._snapshot_messages, _call_tools.tool_def_fields
    with interpreter.lean_inspect():
        assert _model._snapshot_messages is snapshot
        assert _call_tools.tool_def_fields is fields
    assert "keep Inspect's message snapshots" in caplog.text


def model_events(log_dir) -> list:
    """Every model event of a run, without what differs between runs (ids, times)."""
    found = []
    for path in sorted(log_dir.rglob("*.eval")):
        for sample in read_eval_log(str(path)).samples or []:
            for e in sample.events:
                if isinstance(e, ModelEvent):
                    found.append(
                        (
                            sample.id,
                            e.role,
                            [m.model_dump(exclude={"id"}) for m in e.input],
                            [c.message.model_dump(exclude={"id"}) for c in e.output.choices],
                            [t.model_dump() for t in e.tools],
                        )
                    )
    return sorted(found, key=repr)


def test_logs_are_the_same_with_lean_inspect(tmp_path, monkeypatch):
    """A faulted run (explicit and implicit faults, judge votes) logs the same events
    without snapshots and with tool definitions kept as with Inspect's defaults."""
    from contextlib import nullcontext

    from typer.testing import CliRunner

    from occubench.cli import app
    from occubench.scale import _runner

    args = [
        "run",
        "--dataset",
        "reference",
        *REFERENCE_MODEL_ARGS,
        "--with-plan",
        "--env-mode",
        "E3",
        "--protocol",  # faults placed by code (the scripted simulator places none)
        "occubench",
        "--workers",
        "1",
        "--display",
        "none",
    ]
    lean = CliRunner().invoke(app, [*args, "--log-dir", str(tmp_path / "lean")])
    assert lean.exit_code == 0, lean.output
    monkeypatch.setattr(_runner, "lean_inspect", nullcontext)
    snapshots = CliRunner().invoke(app, [*args, "--log-dir", str(tmp_path / "snapshots")])
    assert snapshots.exit_code == 0, snapshots.output
    events = model_events(tmp_path / "lean")
    assert len(events) > 100
    assert events == model_events(tmp_path / "snapshots")


class StandInHandler:
    """Just the levels of Inspect's log handler that decide what it writes."""

    def __init__(self, display: int, transcript: int, trace: int) -> None:
        self.display_level = display
        self.transcript_levelno = transcript
        self.trace_logger_level = trace
        self.file_logger = None


def test_inspect_makes_no_record_its_handler_would_not_write(monkeypatch):
    import logging

    from inspect_ai._util import logger as inspect_logger

    from occubench.scale._interpreter import lean_inspect, quiet_inspect_logging

    inspect_logs = logging.getLogger("inspect_ai")
    monkeypatch.setattr(inspect_logs, "level", 13)  # Inspect's capture level: TRACE
    handler = StandInHandler(display=logging.WARNING, transcript=logging.INFO, trace=30)
    monkeypatch.setitem(inspect_logger._logHandler, "handler", handler)
    quiet_inspect_logging()
    assert inspect_logs.level == 13  # outside lean_inspect: nothing changes
    with lean_inspect():
        quiet_inspect_logging()
        assert inspect_logs.level == logging.INFO  # the transcript's: the lowest written
        assert not inspect_logs.isEnabledFor(13)  # a TRACE record is not even made
        with lean_inspect():  # nested: nothing undone early
            pass
        assert inspect_logs.level == logging.INFO
    assert inspect_logs.level == 13
    handler.trace_logger_level = 13  # the user asked for a trace: every record is made
    with lean_inspect():
        quiet_inspect_logging()
        assert inspect_logs.level == 13


def test_an_eval_starts_without_inspects_control_server_unless_asked(monkeypatch, tmp_path):
    from occubench.config import EvalOptions
    from occubench.scale import _runner

    seen = []

    def eval_set(**kwargs):
        seen.append(kwargs["ctl_server"])
        return True, []

    monkeypatch.setattr(_runner, "eval_set", eval_set)
    monkeypatch.delenv(_runner.CTL_SERVER_ENV, raising=False)
    args = {"model": "occubench/schema-agent", "roles": {}, "options": EvalOptions()}
    _runner.run_eval("occubench/occubench", {}, log_dir=str(tmp_path / "a"), **args)
    monkeypatch.setenv(_runner.CTL_SERVER_ENV, "true")
    _runner.run_eval("occubench/occubench", {}, log_dir=str(tmp_path / "b"), **args)
    assert seen == [False, None]  # None: Inspect reads the variable itself


def test_a_run_leaves_the_results_store_to_the_first_report(tmp_path):
    from typer.testing import CliRunner

    from occubench.cli import app
    from occubench.results import read_runs

    args = ["run", "--dataset", "reference", "--agent-model", "occubench/careful"]
    args += ["--simulator-model", "occubench/canned", "--workers", "1", "--display", "none"]
    result = CliRunner().invoke(app, [*args, "--log-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert list(tmp_path.rglob("*.eval")) and not list(tmp_path.rglob("*.rows.parquet"))
    assert read_runs([tmp_path]) and list(tmp_path.rglob("*.rows.parquet"))  # made now
