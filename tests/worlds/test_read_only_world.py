"""A world that cannot be recorded into is refused before the run (exit 2), not per sample."""

from __future__ import annotations

import os
import subprocess

from conftest import HTTP_MODEL_ARGS
from occubench.testing._openai_server import ScriptedOpenAIServer
from occubench.worlds import World
from scale.test_log_folder import command, flat, needs_tmpfs, tmpfs  # noqa: F401 - a fixture


@needs_tmpfs
def test_recording_into_a_read_only_world_is_refused_before_any_model_call(
    release_dir,
    tmp_path,
    tmpfs,  # noqa: F811 - the fixture imported above
):
    mounted = tmpfs("1m")
    path = mounted / "world"
    World.open(path, writable=True, description="made, then mounted read-only").close()
    subprocess.run(["mount", "-o", "remount,ro", str(mounted)], check=True)
    with ScriptedOpenAIServer() as server:
        env = {**os.environ, "LOCAL_BASE_URL": server.base_url, "LOCAL_API_KEY": "test-key"}
        args = command(
            release_dir, tmp_path / "logs", "--workers", "1", "--world", str(path),
            "--world-mode", "record", models=HTTP_MODEL_ARGS,
        )  # fmt: skip
        run = subprocess.run(args, cwd=tmp_path, env=env, text=True, capture_output=True)
        assert run.returncode == 2, run.stdout + run.stderr
        assert flat(f"{path}: the world cannot be written (Read-only file system)") in flat(
            run.stderr
        )
        assert "Traceback" not in run.stdout + run.stderr
        assert sum(server.stats.requests.values()) == 0  # no model was called
    replay = World.open(path, writable=False)  # still readable as it was
    replay.close()
