"""The Python workspace twin: shapes, errors, file writes, runs it never makes, the ISR task."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from occubench.twins import ChangeKind, FieldKind, Outcome, Twin
from occubench.twins.envs.env_e2c8a2ad7c59 import PythonWorkspaceTwin
from twin_envs import assert_fits, sample_twin, successes

# The refactored firmware a competent engineer writes: the ISR only counts (no heap),
# logging is deferred with micropython.schedule, and an emergency exception buffer exists.
FIXED_MAIN = """import machine
import micropython
import time

micropython.alloc_emergency_exception_buf(100)

rain_pin = machine.Pin(4, machine.Pin.IN, machine.Pin.PULL_UP)
rain_count = 0
logged = 0
wdt = machine.WDT(timeout=2000)


def log_rain(_):
    global logged
    logged = rain_count
    print('Bucket tipped! Total count:', logged)


def rain_handler(pin):
    global rain_count
    rain_count += 1
    try:
        micropython.schedule(log_rain, 0)
    except RuntimeError:
        pass


rain_pin.irq(trigger=machine.Pin.IRQ_FALLING, handler=rain_handler)

print('Weather station initialized...')
while True:
    wdt.feed()
    time.sleep(0.1)
"""


# The task: read the project, run it (diagnosis), rewrite main.py, run it again.
ISR_PLAN: list[tuple[str, dict[str, Any]]] = [
    ("check_environment_state", {}),
    ("list_directory_contents", {"directory_path": "."}),
    ("read_file_content", {"file_path": "main.py"}),
    ("read_file_content", {"file_path": "boot.py"}),
    ("execute_python_script", {"script_path": "main.py", "environment_vars": {"IRQ_RATE": "1000"}}),
    ("write_file_content", {"file_path": "main.py", "content": FIXED_MAIN}),
    ("execute_python_script", {"script_path": "main.py", "environment_vars": {"IRQ_RATE": "1000"}}),
    ("read_file_content", {"file_path": "/workspace/iot_device/main.py"}),
]

READS: list[tuple[str, dict[str, Any]]] = [
    ("list_directory_contents", {"directory_path": "."}),
    ("read_file_content", {"file_path": "boot.py"}),
    ("execute_python_script", {"script_path": "boot.py"}),
    ("check_environment_state", {}),
]


@pytest.fixture
def twin(public_sample: Path) -> Twin:
    return sample_twin(public_sample, PythonWorkspaceTwin)


def test_every_success_fits_its_example_output(twin: Twin) -> None:
    for name, arguments in [*READS, ("write_file_content", {"file_path": "a.py", "content": "x"})]:
        assert_fits(twin, twin.call(name, arguments))
    assert twin.call("list_directory_contents", {"directory_path": "./"}).observation == {
        "items": ["main.py", "boot.py", "a.py"]
    }
    context = twin.call("check_environment_state", {})
    assert context.observation["cwd"] == "/workspace/iot_device"
    assert set(context.marking().values()) == {FieldKind.DETERMINED}


def test_missing_paths_and_unknown_actions_get_the_configs_errors(twin: Twin) -> None:
    for name, arguments in (
        ("read_file_content", {"file_path": "config.py"}),
        ("execute_python_script", {"script_path": "lib/sensor.py"}),
        ("list_directory_contents", {"directory_path": "lib"}),
    ):
        step = twin.call(name, arguments)
        assert step.outcome is Outcome.ERROR and set(step.observation) == {"error"}
        assert "No such file or directory" in step.observation["error"]
        assert step.marking() == {"/error": FieldKind.FREE}
    unknown = twin.call("flash_firmware", {"port": "/dev/ttyUSB0"})
    assert unknown.observation == {"error": "Action 'flash_firmware' not found"}
    assert unknown.marking() == {"/error": FieldKind.DETERMINED}
    bad = twin.call("write_file_content", {"file_path": "main.py"})
    assert bad.outcome is Outcome.ERROR and "content" in bad.observation["error"]
    assert twin.state == twin.env.task_initial_state


def test_writes_create_and_overwrite_files_exactly(twin: Twin) -> None:
    created = assert_fits(
        twin, twin.call("write_file_content", {"file_path": "lib/ring.py", "content": "é"})
    )
    assert created.observation == {"success": True, "bytes_written": 2}
    assert [(c.path, c.kind, c.after) for c in created.changes] == [
        ("/file_system/lib~1ring.py", ChangeKind.ADDED, "é")
    ]
    assert twin.call("list_directory_contents", {"directory_path": "lib/"}).observation == {
        "items": ["ring.py"]
    }
    assert (
        "lib/" in twin.call("list_directory_contents", {"directory_path": "."}).observation["items"]
    )
    over = assert_fits(
        twin, twin.call("write_file_content", {"file_path": "./boot.py", "content": "pass\n"})
    )
    assert [(c.path, c.kind, c.after) for c in over.changes] == [
        ("/file_system/boot.py", ChangeKind.CHANGED, "pass\n")
    ]
    for directory in ("lib", "utils/", "/"):
        step = twin.call("write_file_content", {"file_path": directory, "content": ""})
        assert step.outcome is Outcome.ERROR and not step.changes
    assert over.free_state == created.free_state == []  # a write's content is the agent's


def test_a_run_is_never_made_and_only_a_syntax_error_is_determined(twin: Twin) -> None:
    # A script that would delete the workspace if it ran: the twin only reads its text.
    danger = "import shutil\nshutil.rmtree('/')\n"
    assert_fits(twin, twin.call("write_file_content", {"file_path": "wipe.py", "content": danger}))
    run = assert_fits(twin, twin.call("execute_python_script", {"script_path": "wipe.py"}))
    assert run.marking() == dict.fromkeys(["/stdout", "/stderr", "/exit_code"], FieldKind.FREE)
    assert not run.changes
    assert run.free_state == ["/file_system"]  # had it run, any file could have gone
    spawn = "import subprocess\nsubprocess.run(['pip', 'install', 'x'])\n"
    assert_fits(twin, twin.call("write_file_content", {"file_path": "pip.py", "content": spawn}))
    installs = assert_fits(twin, twin.call("execute_python_script", {"script_path": "pip.py"}))
    assert installs.free_state == ["/file_system", "/installed_packages"]
    assert_fits(
        twin, twin.call("write_file_content", {"file_path": "broken.py", "content": "def f(:\n"})
    )
    broken = assert_fits(twin, twin.call("execute_python_script", {"script_path": "broken.py"}))
    assert broken.observation["exit_code"] == 1 and broken.observation["stdout"] == ""
    assert "SyntaxError" in broken.observation["stderr"]
    assert broken.marking()["/exit_code"] is FieldKind.DETERMINED
    assert broken.marking()["/stderr"] is FieldKind.FREE
    assert broken.free_state == installs.free_state  # a failed parse sets nothing new


def test_the_samples_scripts_touch_no_state_had_they_run(twin: Twin) -> None:
    for script in ("main.py", "boot.py"):  # machine, time, gc: the device only
        assert (
            assert_fits(
                twin, twin.call("execute_python_script", {"script_path": script})
            ).free_state
            == []
        )


def _handler(source: str) -> ast.FunctionDef:
    tree = ast.parse(source)
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "rain_handler"]
    assert len(found) == 1
    return found[0]


def test_the_reference_plan_solves_the_isr_task(twin: Twin) -> None:
    steps = successes(twin, ISR_PLAN)
    original = steps[2].observation["content"]
    assert any(isinstance(n, ast.Dict) for n in ast.walk(_handler(original)))
    # The crash and the survival a run would show are the twin's free choice: the config
    # cannot fix them, so only the file the plan leaves behind is checked.
    assert {s.tool for s in steps if s.free} == {"execute_python_script"}
    final = twin.state["file_system"]["main.py"]
    assert steps[-1].observation == {"content": final} and final == FIXED_MAIN
    assert "micropython.alloc_emergency_exception_buf(100)" in final
    handler = _handler(final)
    assert not any(isinstance(n, ast.Dict) for n in ast.walk(handler))
    calls = [n.func for n in ast.walk(handler) if isinstance(n, ast.Call)]
    assert not any(isinstance(f, ast.Name) and f.id == "print" for f in calls)
    assert any(isinstance(f, ast.Attribute) and f.attr == "schedule" for f in calls)
    assert "wdt.feed()" in final
    assert [c.path for s in steps for c in s.changes] == ["/file_system/main.py"]
