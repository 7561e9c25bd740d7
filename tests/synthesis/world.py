"""Test helpers: the scripted synthesis world as counted mockllm models."""

from __future__ import annotations

from dataclasses import dataclass, field

from inspect_ai.model import ChatMessage, ChatMessageUser, Model, get_model

from occubench.scripted._behaviours import scripted_judge
from occubench.scripted._provider import to_output
from occubench.scripted._synthesis_world import PlanAgent, ScriptedGenerator, state_simulator
from occubench.synthesis import SynthesisModels, SynthesisSettings, load_catalog

TRIAGE = "Emergency Department Triage"
DOCK = "Dock Appointment Scheduling"
PHISHING = "Reported Phishing Triage"
PROFILES = {
    TRIAGE: ["good", "invalid"],
    DOCK: ["repairable", "unsolvable"],
    PHISHING: ["hard", "trivial"],
}
SETTINGS = SynthesisSettings(
    subtopics=2, runs_with_plan=1, runs_without_plan=3, max_repairs=2, votes=1
)


@dataclass
class World:
    """Counted scripted models: every prompt each one received."""

    generator_calls: list[list[ChatMessage]] = field(default_factory=list)
    agent_calls: int = 0

    @property
    def generator_prompts(self) -> list[str]:
        """The stage prompt (first user message) of every generator call."""
        return [
            next(m.text for m in c if isinstance(m, ChatMessageUser)) for c in self.generator_calls
        ]

    def models(self, generator=None) -> SynthesisModels:
        behaviour = generator or ScriptedGenerator(PROFILES)
        agent = PlanAgent()

        def generate(messages: list[ChatMessage], tools, tool_choice, config):
            self.generator_calls.append(list(messages))
            return to_output("mockllm/model", behaviour(messages, tools), messages)

        def act(messages, tools, tool_choice, config):
            self.agent_calls += 1
            return to_output("mockllm/model", agent(messages, tools), messages)

        return SynthesisModels(
            generator=mock(generate),
            agent=mock(act),
            simulator=mock(lambda m, t, c, g: scripted(state_simulator, m, t)),
            verifier=mock(lambda m, t, c, g: scripted(scripted_judge, m, t)),
        )

    def stages(self) -> list[str]:
        """The stage heading of every generator prompt, in order."""
        return [p.splitlines()[0].removeprefix("# Stage: ") for p in self.generator_prompts]


def scripted(behaviour, messages, tools):
    return to_output("mockllm/model", behaviour(messages, tools), messages)


def mock(outputs) -> Model:
    return get_model("mockllm/model", custom_outputs=outputs, memoize=False)


def scenarios(*names: str):
    return load_catalog().select(names=list(names))
