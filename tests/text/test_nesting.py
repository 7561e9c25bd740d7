from occubench.text import json_nesting, nests_deeper


def test_nesting_counts_brackets_outside_strings_only():
    assert json_nesting(b'{"a": [1, {"b": "[[[{{ \\" ]]"}]}') == 3
    assert json_nesting(b'["\\\\", ["\\\\\\"[["]]') == 2  # escaped backslashes, then a quote
    assert json_nesting(b"[[[[") == 4  # unclosed brackets count
    assert json_nesting(b'["[[[[') == 1  # an unclosed string hides the rest
    assert json_nesting(b"]]]][") == 0  # closers first: no depth
    assert json_nesting(b"") == 0


def test_deeper_than_a_limit():
    assert not nests_deeper(b"[[[]]]", 3)
    assert nests_deeper(b"[[[[]]]]", 3)
    assert not nests_deeper(b'["[[[[[[[["]', 3)  # brackets in a string do not nest
    wide = b"[" + b"[]," * 10_000 + b"[]]"
    assert not nests_deeper(wide, 3)
