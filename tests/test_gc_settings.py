import gc

from occubench.defaults import DEFAULT_GC_THRESHOLDS
from occubench.gc_settings import tuned_gc


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
