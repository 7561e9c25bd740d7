"""Interpreter settings of a long eval: garbage collection, Inspect's per-call costs, a quick exit.

CPython's full collections scan every tracked object and stop the event loop while
they run, so every sample in flight waits. In a shard of 50 samples at 1000 ms
latency they came about every two seconds and took 0.2-0.5 s each (3.5 s of a 40 s
run), most of it rescanning what never becomes garbage: modules, classes, schemas,
the dataset. ``tuned_gc`` collects once, freezes what exists (CPython's permanent
generation: never scanned again) and raises the thresholds, so that full
collections become rare while the young generation still frees short-lived cycles.
Peak memory of that shard: 259 MB with the defaults, 270 MB tuned.

A finished sample's transcript (its events, messages and attachment tables) is held
in reference cycles, so only a full collection frees it, and with raised thresholds
full collections are rare: a shard's memory grew by about 1.3 MB per finished sample
(840 MB at 382 tasks). While ``tuned_gc`` is active, ``sample_finished`` (called by an
Inspect hook at the end of each sample, ``occubench.scale``) runs a full collection
every ``DEFAULT_COLLECT_EVERY`` finished samples. Frozen objects are never scanned, so
such a collection covers only the samples in flight and the garbage since the last
one: the peak stays flat whatever the task count, for a bounded pause. Once every
sample of the eval has started (``expect_samples``, ``sample_started``), no collection
runs: no new sample will take the memory it frees, and a pause then only delays the
samples still in flight and the end of the run (0.3 s per shard of 50 samples).

``lean_inspect`` configures Inspect for throughput while an eval runs: its trace file
at ``DEFAULT_TRACE_LEVEL`` (Inspect's default traces the start and end of every model
call; ``INSPECT_TRACE_LEVEL`` in the environment wins), and no message snapshots in
model events (below).

``exit_now`` ends a process whose work is saved without tearing the interpreter down
(freeing every module and object one by one): that took 1.2 s after a shard's eval.

Message snapshots. For every model call Inspect serialises and hashes each message of
the input, and deep copies those it has not seen, so that an agent editing a message
in place after the call cannot change what the event logs (``_snapshot_messages`` in
``inspect_ai.model._model``, 0.3.285). That is O(history) per call, O(calls^2) per
sample, about 0.4 ms per call on a long simulator prompt. occubench's agent, simulator
and judge never edit a message after sending it (each prompt is a fresh list; history
messages are built once), so the snapshot always equals the live message: the events
log the same JSON without it (``tests/scale/test_interpreter.py`` compares whole logs of
faulted runs with and without). ``lean_inspect`` therefore logs the live input messages,
as Inspect itself does for a message it cannot copy. This reaches into a private
function, so it applies only to the Inspect version it was checked against
(``SNAPSHOT_CHECKED``); with another version the snapshots stay and a warning says so.

Tool definitions. On every model call Inspect re-derives each tool's definition from
its registry entry (``tool_def_fields``: name, description, parameter schema,
validated again), although a sample's tools never change. Under the same version pin,
``lean_inspect`` keeps the definition of each tool object for as long as the object
lives (a weak cache): built once per sample.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import logging
import os
import sys
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import version
from typing import Any

from occubench.defaults import DEFAULT_COLLECT_EVERY, DEFAULT_GC_THRESHOLDS, DEFAULT_TRACE_LEVEL

SNAPSHOT_CHECKED = "0.3.285"
"""The inspect-ai version whose message snapshots and tool definitions ``lean_inspect``
adjusts (private functions of ``inspect_ai.model``)."""
TRACE_LEVEL_ENV = "INSPECT_TRACE_LEVEL"

logger = logging.getLogger(__name__)

_tuned = 0
"""Depth of nested ``tuned_gc`` blocks: only the outermost one collects and freezes."""
_finished = 0
"""Samples finished since the last collection ``sample_finished`` ran."""
_expected = 0
"""Samples the evals running in this process will start (0: not known)."""
_started = 0
"""Samples started since ``tuned_gc`` began."""


@contextmanager
def tuned_gc(thresholds: tuple[int, int, int] = DEFAULT_GC_THRESHOLDS) -> Iterator[None]:
    """Freeze the objects that exist now and raise the collector's thresholds.

    The previous thresholds are restored and the frozen objects released on exit. A
    block inside another one changes nothing (one collection, one freeze).
    """
    global _tuned, _finished, _expected, _started
    if _tuned:
        _tuned += 1
        try:
            yield
        finally:
            _tuned -= 1
        return
    previous = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(*thresholds)
    _tuned, _finished, _expected, _started = 1, 0, 0, 0
    try:
        yield
    finally:
        _tuned = 0
        gc.set_threshold(*previous)
        gc.unfreeze()


def gc_tuned() -> bool:
    """Whether a ``tuned_gc`` block is active in this process."""
    return _tuned > 0


def expect_samples(count: int) -> None:
    """An eval of ``count`` samples (epochs included) starts in this ``tuned_gc`` block."""
    global _expected
    if _tuned:
        _expected += count


def sample_started() -> None:
    """Count a started sample (while ``tuned_gc`` is active)."""
    global _started
    if _tuned:
        _started += 1


def sample_finished(every: int = DEFAULT_COLLECT_EVERY) -> bool:
    """Count a finished sample; run a full collection every ``every`` of them.

    Only while ``tuned_gc`` is active (otherwise CPython's own thresholds collect), and
    not once every expected sample has started (see the module's docstring). Returns
    whether it collected.
    """
    global _finished
    if not _tuned:
        return False
    _finished += 1
    if _finished < every or 0 < _expected <= _started:
        return False
    _finished = 0
    gc.collect()
    return True


def _live_messages(messages: list[Any]) -> list[Any]:
    """The input messages of a model event as they are (no snapshot copies)."""
    return list(messages)


class _ToolDefinitions:
    """``tool_def_fields`` kept per tool object (see the module's docstring)."""

    def __init__(self, derive: Any) -> None:
        self.derive = derive
        self.known: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()

    def __call__(self, tool: Any) -> Any:
        try:
            return self.known[tool]
        except KeyError:
            fields = self.known[tool] = self.derive(tool)
            return fields
        except TypeError:  # not weakly referenceable: derived each time, as by Inspect
            return self.derive(tool)


def _use_tool_definitions(derive: Any) -> None:
    """Make ``derive`` the ``tool_def_fields`` Inspect calls.

    Where a model call lists its tools (``inspect_ai.model._call_tools``) and in
    ``ToolDef(tool)``, when the tools run.
    """
    from inspect_ai.model import _call_tools
    from inspect_ai.tool import _tool_def

    for module in (_call_tools, _tool_def):
        vars(module)["tool_def_fields"] = derive


@contextmanager
def lean_inspect(trace_level: str = DEFAULT_TRACE_LEVEL) -> Iterator[None]:
    """Inspect set for throughput while the block runs (see the module's docstring).

    The trace level is set in the environment unless it is set there already (shard
    processes inherit it); message snapshots are left out with the checked Inspect
    version only. Both are restored on exit; a block inside another changes nothing.
    """
    from inspect_ai.model import _model
    from inspect_ai.tool import _tool_def

    had_level = TRACE_LEVEL_ENV in os.environ
    os.environ.setdefault(TRACE_LEVEL_ENV, trace_level)
    snapshot, tool_fields = _model._snapshot_messages, _tool_def.tool_def_fields
    installed = version("inspect_ai")
    if installed == SNAPSHOT_CHECKED:
        _model._snapshot_messages = _live_messages
        if not isinstance(tool_fields, _ToolDefinitions):
            _use_tool_definitions(_ToolDefinitions(tool_fields))
    elif snapshot is not _live_messages:
        logger.warning(
            "inspect-ai %s is not %s: model events keep Inspect's message snapshots "
            "(occubench.scale._interpreter.lean_inspect)",
            installed,
            SNAPSHOT_CHECKED,
        )
    global _lean_depth, _quieted
    _lean_depth += 1
    try:
        yield
    finally:
        _lean_depth -= 1
        _model._snapshot_messages = snapshot
        _use_tool_definitions(tool_fields)
        if not had_level:
            os.environ.pop(TRACE_LEVEL_ENV, None)
        if _lean_depth == 0 and _quieted is not None:
            logging.getLogger(INSPECT_LOGGER).setLevel(_quieted)
            _quieted = None


_lean_depth = 0
"""Depth of nested ``lean_inspect`` blocks (``quiet_inspect_logging`` acts only inside)."""
_quieted: int | None = None
"""The Inspect logger's level before ``quiet_inspect_logging`` raised it."""
INSPECT_LOGGER = "inspect_ai"


def quiet_inspect_logging() -> None:
    """Make Inspect's logger create no record its handler would not write (see the module doc).

    Inspect's logger takes every record from ``TRACE`` up, whatever the handler then
    writes; with the trace file at ``warning`` (``lean_inspect``) two records per model
    call are made, filtered (the redaction rule among the filters) and dropped. Here the
    logger's level is raised to the lowest level its handler writes somewhere (display,
    log file, trace file, sample transcript), so those records are never made. Called
    when an eval's run starts (Inspect's handler exists then), only inside
    ``lean_inspect``, with the checked Inspect version; undone when the block ends.
    """
    global _quieted
    if _lean_depth == 0 or version("inspect_ai") != SNAPSHOT_CHECKED:
        return
    from inspect_ai._util.logger import _logHandler

    handler = _logHandler.get("handler")
    if handler is None:
        return
    written = [
        handler.transcript_levelno,
        handler.trace_logger_level,
        *([handler.display_level] if handler.display_level != logging.NOTSET else []),
        *([handler.file_logger_level or logging.INFO] if handler.file_logger else []),
    ]
    inspect_logger = logging.getLogger(INSPECT_LOGGER)
    lowest = min(written)
    if inspect_logger.level < lowest:
        if _quieted is None:
            _quieted = inspect_logger.level
        inspect_logger.setLevel(lowest)


EVAL_IMPORTS = ("inspect_ai.agent._acp.server", "rich.markdown")
"""Modules an Inspect eval imports only when it starts (inspect-ai 0.3.285): the ACP
server's protocol models and its display's Markdown, about 0.8 s of imports."""
MODEL_DATA = ("inspect_ai.model._model_info", ("_get_model_info_db", "_get_lookup_index"))
"""Where Inspect keeps its model database (inspect-ai 0.3.285): read from its bundled YAML
files (about 0.3 s) at the first model call of a process, and indexed by lower-case name."""


def warm_eval_imports() -> None:
    """Import what an eval imports at its start (``EVAL_IMPORTS``), before it starts.

    A worker does so while it waits for its shard (``occubench.scale.worker``), in
    parallel with the run's preflight and the other workers. A module this Inspect
    version lacks is skipped.
    """
    for name in EVAL_IMPORTS:
        try:
            importlib.import_module(name)
        except ImportError:
            logger.debug("%s not found in inspect-ai %s", name, version("inspect_ai"))


def warm_model_data() -> None:
    """Read Inspect's model database (``MODEL_DATA``) before processes are forked from this one.

    The first model call of every process reads it, and the preflight's calls come after
    the forks: read here once, each fork has it (shared memory, no second read). Only the
    database is read: no model's information is looked up or cached. Skipped when this
    Inspect version keeps it elsewhere.
    """
    module, loaders = MODEL_DATA
    try:
        found = importlib.import_module(module)
        for loader in loaders:
            getattr(found, loader)()
    except (ImportError, AttributeError):
        logger.debug("no model database to read in inspect-ai %s", version("inspect_ai"))


def tune_startup_gc(thresholds: tuple[int, int, int] = DEFAULT_GC_THRESHOLDS) -> None:
    """Raise the collector's thresholds before a process imports Inspect and the SDK.

    Importing them creates only long-lived objects (modules, classes, pydantic schemas),
    which CPython's default thresholds rescan in several full collections: 0.2 s of
    the 1.3 s the ``occubench`` command takes to import, 0.35 s of a shard worker's
    start. For an entry point; ``tuned_gc`` then freezes what the imports made.
    """
    gc.set_threshold(*thresholds)


def exit_now(code: int | str | None = 0) -> None:
    """End the process with ``code`` (as ``sys.exit`` takes it), skipping finalization.

    Exit handlers run first (logging and Inspect flush and close their files there),
    then stdout and stderr are flushed. Only for a process whose work is written and
    closed: a command-line entry point or a worker, never a library call.
    """
    if isinstance(code, str):
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)
