"""The desk in a terminal: the turn printed, the move typed.

At the first move the session's header, the agent's system prompt, the instruction and the
tools are printed; after each call, what the environment answered. Then the person types:

- a tool's number or name: its form is asked field by field (type, required or not,
  description; a choice's values listed); a value that is not of the field's kind is
  asked again, and the arguments then pass the protocol's rule, every problem listed and
  the form asked again (``:back`` at any field goes back to choosing a move);
- a tool's name followed by a JSON object: those are the arguments;
- ``answer``: the final answer, lines until an empty one;
- ``tools``, ``task``: shown again; ``give up``: an empty answer.

The end of the input gives up. Text from the task and the simulator is printed as text
(control sequences stripped). When the input is not a terminal, each line read is echoed
after its prompt, so that a transcript reads as the session went.
"""

from __future__ import annotations

import json
import sys
from typing import IO

import anyio
from rich.console import Console

from occubench.agent import ToolBudget
from occubench.errors import UsageError
from occubench.play._form import MAX_FIELD_CHARS, FormProblems, checked, field_value, json_arguments
from occubench.play._turns import (
    Entry,
    EntryKind,
    FieldKind,
    FormField,
    Move,
    PlayInfo,
    ToolView,
    Turn,
)
from occubench.text import terminal_plain

BACK = ":back"
"""Typed at a field's prompt: leave the form, choose another move."""
HELP = (
    "Type a tool's number or name (then fill its form), or NAME {JSON arguments}; "
    "'answer' to give your final answer; 'tools' or 'task' to see them again; "
    "'give up' to end without an answer."
)


class _Back(Exception):
    """The person left the form."""


class _Ended(Exception):
    """The input ended."""


def _pretty(text: str) -> str:
    """An observation's text, indented when it is JSON."""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except (json.JSONDecodeError, RecursionError):
        return text


class TerminalDesk:
    """A person at a terminal (module doc).

    Args:
        info: The session's header.
        console: Where the turn is printed.
        lines: Where the moves are read (default: standard input).
        echo: Print each line read after its prompt (default: when ``lines`` is not a terminal).
    """

    def __init__(
        self,
        info: PlayInfo,
        console: Console,
        lines: IO[str] | None = None,
        echo: bool | None = None,
    ) -> None:
        self.info = info
        self.console = console
        self.lines = lines if lines is not None else sys.stdin
        self.echo = (not self.lines.isatty()) if echo is None else echo
        self.shown = 0

    async def ask(self, turn: Turn) -> Move:
        """The person's move, typed in a worker thread (the eval's loop goes on)."""
        return await anyio.to_thread.run_sync(self.move, turn, abandon_on_cancel=True)

    def say(self, text: str, style: str | None = None) -> None:
        """Print our own words (markup off: nothing in them is taken as markup)."""
        self.console.print(text, style=style, markup=False, highlight=False, soft_wrap=True)

    def read(self, prompt: str) -> str:
        """One line typed after ``prompt`` (no line end).

        Raises:
            _Ended: the input ended.
        """
        self.console.print(prompt, end=" ", markup=False, highlight=False)
        self.console.file.flush()
        line = self.lines.readline(MAX_FIELD_CHARS + 1)
        if line == "":
            self.say("")
            raise _Ended
        long = len(line) > MAX_FIELD_CHARS and not line.endswith("\n")
        while long and (rest := self.lines.readline(MAX_FIELD_CHARS)) and not rest.endswith("\n"):
            pass  # the rest of an over-long line is dropped
        line = line.removesuffix("\n").removesuffix("\r")
        if self.echo:
            self.say(terminal_plain(line if not long else line[:80] + "..."))
        return "" if long else line

    def move(self, turn: Turn) -> Move:
        """Show what is new in ``turn`` and read the person's move (module doc)."""
        if turn.number == 1:
            self.show_task(turn)
            self.show_tools(turn)
        self.show_entries(turn.entries[self.shown :])
        self.shown = len(turn.entries)
        try:
            return self._choose(turn)
        except _Ended:
            self.say("The input ended: you give up (an empty answer).")
            return Move(answer="")

    def show_task(self, turn: Turn) -> None:
        """The header, the system prompt and the instruction."""
        info = self.info
        rule = "arguments checked against the schema" if info.checks_arguments else "arguments"
        rule += "" if info.checks_arguments else " passed on as typed"
        self.say(
            f"Task {info.task_id}: {terminal_plain(info.scenario)} "
            f"({terminal_plain(info.industry)} / {terminal_plain(info.domain)}), "
            f"difficulty {info.difficulty}",
            "bold",
        )
        self.say(
            f"Environment: {info.faults_text()}; protocol {info.protocol} ({rule}); "
            f"you play human/{info.player}; simulator {terminal_plain(info.simulator)}"
        )
        self.say("\nSystem prompt:", "bold")
        self.say(terminal_plain(turn.system_prompt))
        self.say("\nInstruction:", "bold")
        self.say(terminal_plain(turn.instruction))

    def show_tools(self, turn: Turn) -> None:
        """The tools, numbered, with their arguments."""
        self.say("\nTools:", "bold")
        for number, tool in enumerate(turn.tools, 1):
            arguments = ", ".join(
                f"{f.name}{'' if f.required else '?'}: {f.type_text}" for f in tool.fields
            )
            self.say(f"  {number}. {tool.name}({terminal_plain(arguments)})")
            if tool.description:
                self.say(f"     {terminal_plain(tool.description)}")
        note = ToolBudget(cap=self.info.max_tool_calls).note()
        self.say(f"\n{HELP}" + (f" {note}" if note else ""))

    def show_entries(self, entries: list[Entry]) -> None:
        """What the environment answered since the last move."""
        for entry in entries:
            if entry.kind is EntryKind.OBSERVATION:
                self.say(f"\nObservation from {entry.tool}:", "bold")
                self.say(terminal_plain(_pretty(entry.text)))
            elif entry.kind is EntryKind.REFUSED:
                self.say(f"\nThe call to {entry.tool} was refused:", "bold red")
                self.say(terminal_plain(entry.text))

    def _choose(self, turn: Turn) -> Move:
        """Read moves until one is complete."""
        while True:
            typed = self.read(f"\n[move {turn.number}, {turn.calls} call(s) so far] >").strip()
            word = typed.lower()
            if word in ("", "help", "?"):
                self.say(HELP)
            elif word == "tools":
                self.show_tools(turn)
            elif word == "task":
                self.show_task(turn)
            elif word in ("give up", "giveup", "quit"):
                self.say("You give up (an empty answer).")
                return Move(answer="")
            elif word == "answer":
                answer = self._answer()
                if answer:
                    return Move(answer=answer)
                self.say("An empty answer is not sent: type 'give up' to end without one.")
            else:
                move = self._call(turn, typed)
                if move is not None:
                    return move

    def _answer(self) -> str:
        self.say("Your final answer (end it with an empty line):")
        lines = []
        while line := self.read(">"):
            lines.append(line)
        return "\n".join(lines).strip()

    def _call(self, turn: Turn, typed: str) -> Move | None:
        """The call ``typed`` names (None: no such tool, or the person went back)."""
        name, _, rest = typed.partition(" ")
        tool = turn.tool(name)
        if tool is None and name.isdigit() and 1 <= int(name) <= len(turn.tools):
            tool = turn.tools[int(name) - 1]
        if tool is None:
            self.say(f"No tool {typed!r}. {HELP}")
            return None
        try:
            if rest.strip():
                arguments = json_arguments(tool, rest, self.info.checks_arguments)
            else:
                arguments = self._form(tool)
        except FormProblems as problems:
            self.say("Not sent:", "bold red")
            for problem in problems.problems:
                self.say(f"  - {terminal_plain(problem)}")
            return None
        except _Back:
            return None
        return Move(tool=tool.name, arguments=arguments)

    def _form(self, tool: ToolView) -> dict[str, object]:
        """The arguments from the tool's form, asked field by field until they pass the rule.

        Raises:
            _Back: the person typed ``BACK``.
            _Ended: the input ended.
        """
        if not tool.fields:
            return checked(tool, {}, self.info.checks_arguments)
        self.say(f"{tool.name}: fill in each argument ({BACK} to choose another move).")
        while True:
            arguments: dict[str, object] = {}
            for field in tool.fields:
                value = self._field(field)
                if value is not _LEFT_OUT:
                    arguments[field.name] = value
            try:
                return checked(tool, arguments, self.info.checks_arguments)
            except FormProblems as problems:
                self.say("The arguments do not pass the tool's schema:", "bold red")
                for problem in problems.problems:
                    self.say(f"  - {terminal_plain(problem)}")
                self.say("Fill the form again.")

    def _field(self, field: FormField) -> object:
        """One field's value (``_LEFT_OUT`` for an optional field left empty)."""
        need = "required" if field.required else "optional, Enter leaves it out"
        about = f": {terminal_plain(field.description)}" if field.description else ""
        self.say(f"  {field.name} ({terminal_plain(field.type_text)}, {need}){about}")
        if field.choices:
            self.say(f"    one of: {terminal_plain(', '.join(field.choices))}")
        while True:
            text = self.read("  >")
            if text.strip() == BACK:
                raise _Back
            if not text.strip():
                if field.required and self.info.checks_arguments:
                    self.say("  ! required")
                    continue
                return _LEFT_OUT
            try:
                return field_value(field, text)
            except UsageError as e:
                self.say(f"  ! {terminal_plain(e)}")
            if field.kind is FieldKind.JSON:
                self.say('  (type the value as JSON, e.g. [1, 2] or {"a": 1})')


_LEFT_OUT = object()
"""A field left empty."""
