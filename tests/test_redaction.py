"""The redaction rule: which values are secrets, and each place it is applied."""

from __future__ import annotations

import base64
import logging
import sys
import zipfile

import pytest

from occubench.redaction import (
    REDACTED,
    RedactingFilter,
    environment_secrets,
    known_secrets,
    model_secrets,
    redact,
    redact_eval_file,
    redact_log_folder,
    redact_settings,
    redact_strings,
    register_secrets,
    secrets_of_settings,
    secrets_of_url,
)

KEY = "sk-test-0123456789abcdefghij"
TOKEN = "tok-ABCDEFGH12345678"


def test_secrets_from_the_environment(monkeypatch):
    env = {
        "LOCAL_API_KEY": KEY,
        "HF_TOKEN": TOKEN,
        "LOCAL_BASE_URL": "https://me:pw-secret-123@gw.example/v1?api_key=q-secret-456&model=x",
        "SHORT_API_KEY": "x",  # too short to be a secret (redacting it would wreck text)
        "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock",  # a path, not a key
        "PLAIN": "not-a-secret-at-all",
    }
    found = environment_secrets(env)
    basic = base64.b64encode(b"me:pw-secret-123").decode()
    assert found == {KEY, TOKEN, "pw-secret-123", "q-secret-456", basic}


def test_url_and_settings_secrets():
    assert secrets_of_url("http://127.0.0.1:8000/v1") == set()
    assert secrets_of_url("http://u:longpassword@h/v1?token=abcdefgh123&x=1") >= {
        "longpassword",
        "abcdefgh123",
    }
    settings = {
        "extra_headers": {"Authorization": f"Bearer {TOKEN}", "X-Api-Key": KEY, "X-Trace": "on"},
        "base_url": "http://u:longpassword@h/v1",
        "temperature": 0.5,
    }
    assert secrets_of_settings(settings) >= {TOKEN, KEY, f"Bearer {TOKEN}", "longpassword"}
    assert "on" not in secrets_of_settings(settings)
    shown = redact_settings({"extra_headers": settings["extra_headers"], "reasoning_effort": "low"})
    assert shown == {
        "extra_headers": {"Authorization": REDACTED, "X-Api-Key": REDACTED, "X-Trace": "on"},
        "reasoning_effort": "low",
    }


def test_model_secrets_of_a_built_model():
    from inspect_ai.model import GenerateConfig, get_model

    model = get_model(
        "openai-api/gw/m",
        base_url="http://me:pw-secret-123@127.0.0.1:9/v1",
        api_key=KEY,
        config=GenerateConfig(extra_headers={"x-api-key": TOKEN}),
        memoize=False,
        default_headers={"Authorization": "Bearer model-arg-secret"},
    )
    assert model_secrets(model) >= {KEY, TOKEN, "pw-secret-123", "model-arg-secret"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("POST https://me:pw@gw/v1 ok", "POST https://me:[redacted]@gw/v1 ok"),
        ("GET /v1?api_key=abc&model=m", "GET /v1?api_key=[redacted]&model=m"),
        ("url?key=abc123;sig=zzz", "url?key=[redacted];sig=[redacted]"),
        ("Authorization: Bearer abcdefgh12345", "Authorization: Bearer [redacted]"),
        (
            "Incorrect API key provided: sk-proj-AbCdEf0123456789xyz.",
            "Incorrect API key provided: [redacted].",
        ),
        ("google AIzaSyA-1234567890abcdefghijklmnopqrstu", "google [redacted]"),
        ('{"url": "http://u:p4ss@h/x"}', '{"url": "http://u:[redacted]@h/x"}'),
        ("nothing to see: model=gpt-5, tokens=12", "nothing to see: model=gpt-5, tokens=12"),
    ],
)
def test_patterns_redact_whatever_is_known(text, expected):
    assert redact(text, frozenset()) == expected


def test_known_secrets_are_replaced_longest_first(monkeypatch):
    monkeypatch.setenv("A_API_KEY", "abcdefgh")
    monkeypatch.setenv("B_API_KEY", "abcdefgh-and-more")
    assert redact("x abcdefgh-and-more y abcdefgh z") == f"x {REDACTED} y {REDACTED} z"
    assert redact_strings({"a": ["abcdefgh"], "n": 3}) == {"a": [REDACTED], "n": 3}


def test_registered_secrets_join_the_environment_ones():
    register_secrets(["registered-secret-value", "short"])
    assert "registered-secret-value" in known_secrets() and "short" not in known_secrets()
    assert redact("a registered-secret-value b") == f"a {REDACTED} b"


def test_the_log_filter_redacts_message_arguments_and_trace_extras(monkeypatch):
    monkeypatch.setenv("LOCAL_API_KEY", KEY)
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "key %s", (KEY,), None)
    record.__dict__["detail"] = f"POST http://h/v1?api_key={KEY}"
    record.__dict__["error"] = f"401: Incorrect API key provided: {KEY}"
    record.__dict__["stacktrace"] = f"Traceback ...\nAuthenticationError: {KEY}"
    try:
        raise RuntimeError(f"failed with {KEY}")
    except RuntimeError:
        record.exc_info = sys.exc_info()
    assert RedactingFilter().filter(record)
    assert record.getMessage() == f"key {REDACTED}"
    assert [n for n, v in record.__dict__.items() if KEY in str(v)] == []
    assert f"RuntimeError: failed with {REDACTED}" in record.exc_text


def test_an_eval_file_is_rewritten_with_its_members_redacted(tmp_path, monkeypatch):
    import inspect_ai.log  # noqa: F401 - registers zstd members (Inspect writes them)

    monkeypatch.setenv("LOCAL_API_KEY", KEY)
    path = tmp_path / "run.eval"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("header.json", '{"base_url": "http://u:pw-in-header@h/v1"}')
        z.writestr("samples/1_epoch_1.json", f'{{"error": "Incorrect API key provided: {KEY}"}}')
        z.writestr("samples/2_epoch_1.json", '{"clean": true}')
    (tmp_path / "logs.json").write_text(f'{{"key": "{KEY}"}}')
    assert redact_log_folder(tmp_path) == [path, tmp_path / "logs.json"]
    with zipfile.ZipFile(path) as z:
        assert z.namelist() == ["header.json", "samples/1_epoch_1.json", "samples/2_epoch_1.json"]
        assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in z.infolist())
        assert z.read("header.json") == b'{"base_url": "http://u:[redacted]@h/v1"}'
        assert KEY.encode() not in z.read("samples/1_epoch_1.json")
        assert z.read("samples/2_epoch_1.json") == b'{"clean": true}'
    assert KEY not in (tmp_path / "logs.json").read_text()
    assert not redact_eval_file(path)  # nothing left: not rewritten again
    assert redact_log_folder(tmp_path / "absent") == []


def test_an_eval_file_with_a_secret_in_every_sample_is_redacted_one_member_at_a_time(
    tmp_path, monkeypatch
):
    """A word-like key in every sample (a judge prompt's word) must not hold the log in memory."""
    import random
    import tracemalloc

    monkeypatch.setenv("LOCAL_API_KEY", KEY)
    path = tmp_path / "run.eval"
    draw = random.Random(0)
    members = 200
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("samples/0_epoch_1.json", '{"clean": true}')  # before the first change
        for i in range(1, members):
            noise = "".join(draw.choices("abcdefgh ", k=50_000))
            z.writestr(f"samples/{i}_epoch_1.json", f'{{"prompt": "{noise} {KEY}"}}')
    tracemalloc.start()
    try:
        assert redact_eval_file(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < members * 50_000 // 5  # members' worth, not the log's ~10 MB (10.5 MB before)
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        assert names == [f"samples/{i}_epoch_1.json" for i in range(members)]
        assert z.read(names[0]) == b'{"clean": true}'
        redacted = [z.read(n) for n in names[1:]]
    assert all(KEY.encode() not in data and REDACTED.encode() in data for data in redacted)
    assert not (tmp_path / f".{path.name}.redacting").exists()


def test_terminal_text_is_redacted(monkeypatch):
    from occubench.text import terminal_text

    monkeypatch.setenv("LOCAL_API_KEY", KEY)
    assert terminal_text(f"Error code: 401 - Incorrect API key provided: {KEY}").endswith(
        "provided: \\[redacted]"
    )


def test_a_number_under_a_secret_looking_name_is_shown():
    from occubench.redaction import REDACTED, redact_settings

    shown = redact_settings({"reasoning_tokens": 4096, "api_key": "sk-secret-value-123456"})
    assert shown == {"reasoning_tokens": 4096, "api_key": REDACTED}
