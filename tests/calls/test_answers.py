"""Unreadable provider answers: recognised, caught at the client, retried at the call."""

from __future__ import annotations

import asyncio
import json

import httpx2
import pytest
from inspect_ai.model import GenerateConfig, ModelAPI, ModelOutput, get_model, modelapi
from tenacity import wait_none

from occubench.calls import (
    ResilientModel,
    UnreadableAnswer,
    answer_problem,
    check_answer,
    is_unreadable,
    resilient,
    watch_answers,
)

COMPLETION = {
    "id": "c1",
    "object": "chat.completion",
    "created": 0,
    "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}],
}


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (json.dumps(COMPLETION).encode(), None),
        (json.dumps(COMPLETION).encode()[:60], "not JSON"),
        (b"<html>bad gateway</html>", "not JSON"),
        (b'"just a string"', "a JSON str, not an object"),
        (json.dumps({**COMPLETION, "choices": []}).encode(), "no choices"),
        (
            json.dumps({k: v for k, v in COMPLETION.items() if k != "choices"}).encode(),
            "no choices",
        ),
        (json.dumps({**COMPLETION, "choices": [{"index": 0}]}).encode(), "a choice without"),
    ],
)
def test_what_cannot_be_read(body, problem):
    found = answer_problem(body)
    assert found == problem if problem is None else found.startswith(problem)


def client(status: int, body: bytes, content_type: str = "application/json"):
    transport = httpx2.MockTransport(
        lambda request: httpx2.Response(
            status, content=body, headers={"content-type": content_type}
        )
    )
    return httpx2.AsyncClient(transport=transport, event_hooks={"response": [check_answer]})


def post(status: int, body: bytes, path: str = "/v1/chat/completions", **kw) -> int:
    async def go() -> int:
        async with client(status, body, **kw) as c:
            response = await c.post(f"http://gw{path}", json={})
            return response.status_code

    return asyncio.run(go())


def test_the_client_hook_raises_for_an_unreadable_completion_only():
    good = json.dumps(COMPLETION).encode()
    assert post(200, good) == 200
    with pytest.raises(UnreadableAnswer, match=r"HTTP 200\): not JSON .*body: '\{\"id\""):
        post(200, good[:40])
    assert post(500, b"oops") == 500  # a status error is the SDK's to classify
    assert post(200, b"data: {...}", content_type="text/event-stream") == 200  # streamed
    assert post(200, b"not json", path="/v1/models") == 200  # not a completion
    assert issubclass(UnreadableAnswer, httpx2.TransportError)  # retried like a dropped link


def test_unreadable_in_an_exception_chain():
    try:
        try:
            json.loads("{")
        except json.JSONDecodeError as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as e:
        assert is_unreadable(e)
    assert not is_unreadable(TypeError("a bug"))
    assert not is_unreadable(ValueError("a value"))


def test_resilient_keeps_the_model_and_checks_its_client():
    model = get_model("openai-api/gw/m", base_url="http://127.0.0.1:9/v1", api_key="k",
                      config=GenerateConfig(temperature=0.5), memoize=False)  # fmt: skip
    model._set_role("simulator")
    made = resilient(model)
    assert isinstance(made, ResilientModel) and made is not model
    assert made.api is model.api and made.config == model.config and made.role == "simulator"
    assert made.explicit_base_url == model.explicit_base_url == "http://127.0.0.1:9/v1"
    assert resilient(made) is made and resilient(made, replay=False) is not made
    assert check_answer in model.api.http_client.event_hooks["response"]
    assert (
        watch_answers(model.api)
        and model.api.http_client.event_hooks["response"].count(check_answer) == 1
    )
    assert not watch_answers(object())


class Garbled(ModelAPI):
    """A provider without an httpx client whose first answer fails to parse."""

    def __init__(self, model_name: str, base_url=None, api_key=None, config=None, **model_args):
        super().__init__(model_name, base_url, api_key, config=config or GenerateConfig())
        self.calls = 0

    def retry_wait(self):
        return wait_none()

    async def generate(self, input, tools, tool_choice, config):
        self.calls += 1
        if self.calls == 1:
            json.loads('{"choices": [')  # what an SDK does with a body cut short
        return ModelOutput.from_content("garbled", "fine")


@modelapi(name="occubench-test-garbled")
def garbled() -> type:
    return Garbled


def test_any_provider_s_unreadable_answer_is_retried_at_the_call():
    config = GenerateConfig(max_retries=3)
    plain = get_model("occubench-test-garbled/m", config=config, memoize=False)
    with pytest.raises(json.JSONDecodeError):
        asyncio.run(plain.generate("hi"))  # Inspect alone gives up at once
    model = resilient(get_model("occubench-test-garbled/m", config=config, memoize=False))
    output = asyncio.run(model.generate("hi"))
    assert output.completion == "fine" and model.api.calls == 2  # one retry, at the call
