import gc
import subprocess
import sys

from occubench.defaults import DEFAULT_GC_THRESHOLDS
from occubench.interpreter import tuned_gc


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


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_exit_now_runs_exit_handlers_and_flushes(tmp_path):
    marker = tmp_path / "handler-ran"
    done = run_python(
        "import atexit, pathlib, sys; from occubench.interpreter import exit_now; "
        f"atexit.register(lambda: pathlib.Path({str(marker)!r}).write_text('yes')); "
        "sys.stdout.write('buffered, no newline'); exit_now(3)"
    )
    assert done.returncode == 3
    assert done.stdout == "buffered, no newline"
    assert marker.read_text() == "yes"


def test_exit_now_takes_sys_exit_codes():
    assert run_python("from occubench.interpreter import exit_now; exit_now(None)").returncode == 0
    done = run_python("from occubench.interpreter import exit_now; exit_now('bad input')")
    assert (done.returncode, done.stderr.strip()) == (1, "bad input")
