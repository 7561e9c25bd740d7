import json

import pytest

from occubench.dataset import EnvConfig, load_dataset
from occubench.simulator import embeds_state, normalize_braces, render_system_prompt


def test_doubled_braces_are_halved():
    assert normalize_braces('{{ "a": {{ "b": 1 }}}}') == '{ "a": { "b": 1 }}'


def test_single_braces_left_alone():
    text = '{"a": {"b": 1}} and {{x}}'  # an odd run means the text is not a raw template
    assert normalize_braces(text) == text


def test_sections_decided_separately():
    text = 'Body {{x}}\n{{initial_state}}: {{"a": 1}}\n{action_set_definitions}: {"t": {}}'
    assert (
        normalize_braces(text)
        == 'Body {x}\n{initial_state}: {"a": 1}\n{action_set_definitions}: {"t": {}}'
    )


@pytest.mark.parametrize("source", ["release_dir", "public_sample"])
def test_release_prompts_render_valid_json(source, request):
    ds = load_dataset(request.getfixturevalue(source))
    for task in ds.tasks:
        env = ds.env(task)
        prompt = render_system_prompt(env, date="2025-06-16")
        assert "{{" not in prompt and "2025-06-16" in prompt and "<observation>" in prompt
        assert "### Actions" not in prompt  # release prompts embed their own state and tools
        state = prompt.split("{initial_state}:", 1)[1].split("{state_descriptions}:", 1)[0]
        assert json.loads(state) == env.task_initial_state
        tools = prompt.split("{action_set_definitions}:", 1)[1].split("### Reply format", 1)[0]
        assert set(json.loads(tools)) == {t.name for t in env.action_set_definitions}


def test_prompt_without_state_gets_sections():
    env = EnvConfig(
        environment_name="e",
        world_model_system_prompt="You simulate a shop.",
        action_set_definitions=[
            {"name": "get", "description": "d", "parameters": {"type": "object", "properties": {}}}
        ],
        task_initial_state={"stock": {"sku1": 4}},
        state_description={"stock": "units"},
    )
    prompt = render_system_prompt(env, date="2025-01-01", extra_rules="RULES HERE")
    assert (
        '"sku1": 4' in prompt and "### Actions" in prompt and prompt.rstrip().endswith("RULES HERE")
    )


RELEASE_TAIL = (
    'You simulate a ledger.\n{{initial_state}}: {{\n  "rows": []\n}}\n'
    '{{state_descriptions}}: {{\n  "rows": "Ledger rows."\n}}\n'
    '{action_set_definitions}: {"get_rows": {}}'
)


@pytest.mark.parametrize(
    ("prompt", "embedded"),
    [
        (RELEASE_TAIL, True),  # the release's label line
        (normalize_braces(RELEASE_TAIL), True),  # the same with its braces halved
        ("Answer from {initial_state}; never invent rows.", False),
        ("{initial_state}: the state you are given below.", False),  # a label, no object
        ("Rules:\n {{initial_state}}: {{\n}}", False),  # not at the start of a line
        ("The state follows.\n{{ initial_state }}: {{}}", False),
        ("See {{initial_state}}: {{...}} for the state.", False),
    ],
)
def test_only_the_releases_label_line_embeds_the_state(prompt, embedded):
    assert embeds_state(prompt) is embedded


def test_a_prompt_that_mentions_the_state_gets_the_sections():
    env = EnvConfig(
        environment_name="e",
        world_model_system_prompt="{initial_state}: answer from the state below.",
        action_set_definitions=[
            {"name": "get", "description": "d", "parameters": {"type": "object", "properties": {}}}
        ],
        task_initial_state={"stock": {"sku1": 4}},
        state_description={"stock": "units"},
    )
    prompt = render_system_prompt(env, date="2025-01-01")
    assert "### Initial state" in prompt and '"sku1": 4' in prompt and "### Actions" in prompt
