"""The Ray executor: each shard as a Ray task, scheduled by Ray on its resources.

Ray is an optional extra (``pip install 'occubench[ray]'``), imported only here and
only when this executor is chosen. Each shard asks for ``RunSpec.num_cpus`` CPUs and
``RunSpec.resources`` (for example ``{"node:10.0.0.5": 0.01}`` to land on the node
that serves a local model); Ray places it. A task runs in a fresh worker process
(``max_calls=1``). Shards log to the run's folder, which must be one every node
reaches: a shared file system path or an object store URL (``s3://...``).

Ray puts the driver's current folder first on its workers' import path; Ray is started
from an empty folder of ours instead (``_ray_session``), so that a run started in a folder
holding an ``occubench/`` package (a clone of the release) does not run that package.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import Any

from occubench.defaults import DEFAULT_PROGRESS_POLL_SECONDS
from occubench.scale._progress import ProgressView, ShardState
from occubench.scale._runner import run_shard
from occubench.scale._spec import ShardResult, ShardSpec


def import_ray() -> ModuleType:
    """The ``ray`` module, or a clear error saying how to install it."""
    try:
        import ray
    except ImportError as e:
        raise RuntimeError(
            "the ray executor needs Ray: pip install 'occubench[ray]' (or pip install 'ray>=2.9')"
        ) from e
    return ray


def run_shard_data(spec: dict[str, Any], folder: str) -> dict[str, Any]:
    """Body of a shard's Ray task: a ShardSpec in, a ShardResult out, as plain data.

    The task works in ``folder``, the driver's current folder, where this node has it,
    so that relative paths (an agent command's program) mean what they mean to the
    driver; nothing is imported from it (see ``_ray_session``).
    """
    if os.path.isdir(folder):
        os.chdir(folder)
    return run_shard(ShardSpec.model_validate(spec)).model_dump(mode="json")


def run_ray(
    shards: Sequence[ShardSpec],
    address: str | None = None,
    view: ProgressView | None = None,
    poll: float = DEFAULT_PROGRESS_POLL_SECONDS,
) -> list[ShardResult]:
    """Run the shards as Ray tasks; results in shard order.

    Connects to the cluster at ``address`` (``auto``, ``ray://host:10001``, ...) or,
    with no address, starts a local Ray instance, unless Ray is already initialised in
    this process (then that connection is used and left open).
    """
    ray = import_ray()
    folder = os.getcwd()
    with _ray_session(ray, address):
        task = ray.remote(max_calls=1)(run_shard_data)
        refs = [
            task.options(
                num_cpus=s.run.num_cpus,
                resources=s.run.resources or None,
                name=f"occubench {s.name}",
            ).remote(s.model_dump(mode="json"), folder)
            for s in shards
        ]
        position = {ref: i for i, ref in enumerate(refs)}
        results: list[ShardResult | None] = [None] * len(shards)
        states = [ShardState.RUNNING] * len(shards)  # Ray decides when each one starts
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=len(pending), timeout=poll)
            for ref in done:
                i = position[ref]
                result = _result(ray, ref, shards[i])
                results[i] = result
                states[i] = ShardState.DONE if result.success else ShardState.FAILED
            if view is not None:
                view.update(states)
    return [r for r in results if r is not None]


@contextlib.contextmanager
def _ray_session(ray: ModuleType, address: str | None) -> Iterator[None]:
    """Ray started (or joined at ``address``) from an empty folder of ours, shut down after.

    Ray adds the driver's current folder to the front of its workers' import path; the
    empty folder, kept until Ray is shut down, holds nothing to import. When Ray is
    already initialised in this process, its connection is used as it is and left open
    (its workers' import path is then the caller's).
    """
    if ray.is_initialized():
        yield
        return
    with tempfile.TemporaryDirectory(prefix="occubench-ray-") as empty:
        here = os.getcwd()
        os.chdir(empty)
        try:
            ray.init(address=address)
        finally:
            os.chdir(here)
        try:
            yield
        finally:
            ray.shutdown()


def _result(ray: ModuleType, ref: Any, spec: ShardSpec) -> ShardResult:
    try:
        return ShardResult.model_validate(ray.get(ref))
    except ray.exceptions.RayError as e:
        return spec.result(False, error=f"Ray task failed: {e}")
