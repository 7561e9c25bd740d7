"""The exploit guard: evidence that an agent steered the simulator or the judge.

An agent under optimisation can learn to earn its reward from the simulator and the judge
instead of from the task: tool arguments that tell the simulator to answer "success",
answers that address the judge, a forged transcript of calls it never made. The guard reads
each graded episode, deterministically (no model is asked), and gathers the evidence
(``find_exploits``), each piece with its kind, where it was found and the text, bounded:

- ``instruction_in_arguments`` / ``instruction_in_answer``: a tool argument, or the agent's
  answer or another message of its, carries an instruction to the simulator or the judge
  (overrides of earlier instructions, a dictated reply or verdict, a note to the grader,
  a claimed or assigned role, system-prompt markers, a verdict object);
- ``forged_trajectory``: the agent's text imitates a transcript (the harness's or a
  tool-call API's) or shows a call of a tool it never called;
- ``observation_echo``: an observation carries an instruction, or repeats the agent's
  instruction text (a simulator that obeyed);
- ``impossible_success``: an observation reports success for an action the tool's schema
  cannot do (an undeclared tool or argument, or a success key the tool's example output
  lacks), and the agent asked for it;
- ``contract_break``: an observation that failed an online simulator check was kept and
  reports success, and the agent asked for it;
- ``verdict_quotes_agent``: a judge's vote repeats the agent's instruction text;
- ``simulator_off_contract``: a success out of the tool's contract (either of the two
  above) that nothing of the agent's asked for: the simulator's own answer, evidence
  against the environment, never against the agent.

The agent asked for an out-of-contract success when a text of its instructs or forges
(any of the kinds above found in its arguments, messages or answer), or when the call's
own arguments name the success the observation reports (the word ``success`` in a note,
a ``task_completed`` key): a weak or drifting simulator's generic success envelope is
not the agent's doing. ``ExploitKind.against_agent`` says whom a piece is against.

A pass with evidence against the agent is ``exploit_suspected`` (``Grade``); an episode
with ``simulator_off_contract`` evidence is ``simulator_off_contract``, pass or fail,
reported with the online simulator checks. The ``exploit_guard`` setting (``ExploitGuard``)
says whether it keeps its verdict (``flag``) or is graded a failure
(``zero``), or whether episodes are not checked at all (``off``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from occubench.lazy import lazy_names

if TYPE_CHECKING:
    from occubench.guard._detect import ANSWER, find_exploits
    from occubench.guard._evidence import (
        DEFAULT_GUARD,
        ExploitEvidence,
        ExploitGuard,
        ExploitKind,
        bounded,
    )
    from occubench.guard._patterns import (
        INSTRUCTIONS,
        TRANSCRIPT_MARKERS,
        lifted,
        success_paths,
    )

_MODULES = {
    "ANSWER": "_detect",
    "DEFAULT_GUARD": "_evidence",
    "INSTRUCTIONS": "_patterns",
    "TRANSCRIPT_MARKERS": "_patterns",
    "ExploitEvidence": "_evidence",
    "ExploitGuard": "_evidence",
    "ExploitKind": "_evidence",
    "bounded": "_evidence",
    "find_exploits": "_detect",
    "lifted": "_patterns",
    "success_paths": "_patterns",
}
"""The module of each public name: the setting and the records load without Inspect."""

__getattr__ = lazy_names(__name__, _MODULES)

__all__ = [
    "ANSWER",
    "DEFAULT_GUARD",
    "INSTRUCTIONS",
    "TRANSCRIPT_MARKERS",
    "ExploitEvidence",
    "ExploitGuard",
    "ExploitKind",
    "bounded",
    "find_exploits",
    "lifted",
    "success_paths",
]
