"""The world settings: their values, and that runs with and without a world log apart."""

import pytest
from typer.testing import CliRunner

from conftest import SCRIPTED_MODEL_ARGS
from occubench.cli import app
from occubench.config import RunConfig
from occubench.roles import Role
from occubench.scale import RunSpec
from occubench.worlds import WorldMode


def folder(**config):
    spec = RunSpec(
        agent="a/b", roles={Role.SIMULATOR: "s/t"}, config=RunConfig(**config), log_dir="logs"
    )
    return spec.folder_name(1)


def test_a_world_its_mode_and_variant_name_another_log_folder():
    plain = folder()
    recorded = folder(world="w")
    assert len({plain, recorded, folder(world="w", world_mode="replay")}) == 3
    assert folder(world="w", world_variant="epoch") != recorded
    assert folder(world="other") != recorded
    # without a world, its mode and variant cannot matter
    assert folder(world_mode="replay", world_variant=3) == plain


def test_values_as_the_command_line_gives_them():
    config = RunConfig(world="w", world_mode="REPLAY-live", world_variant="2")
    assert config.world_mode is WorldMode.REPLAY_LIVE and config.world_variant == 2
    assert RunConfig(world_variant="epoch").world_variant == "epoch"
    with pytest.raises(ValueError, match="world_variant"):
        RunConfig(world_variant=-1)
    with pytest.raises(ValueError, match="epoch"):
        RunConfig(world_variant="sometimes")


def test_a_bad_world_is_one_clear_line(release_dir, tmp_path):
    runner = CliRunner()
    packed = tmp_path / "w.world.zip"
    packed.write_bytes(b"not a zip")
    base = ["run", *SCRIPTED_MODEL_ARGS, "--display", "none", "--dataset", str(release_dir)]
    for extra, said in [
        (["--world", str(tmp_path / "none"), "--world-mode", "replay"], "no world at"),
        (["--world-variant", "sometimes"], "world_variant"),
        (["--world", str(packed)], "read-only"),
    ]:
        result = runner.invoke(app, [*base, "--log-dir", str(tmp_path / "logs"), *extra])
        assert result.exit_code == 2, result.output
        assert said in result.output and "Traceback" not in result.output
