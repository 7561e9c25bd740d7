"""Twin of ``env_e2c8a2ad7c59``: a Python/MicroPython project workspace being debugged.

How it reads its config:
- ``file_system`` maps paths relative to ``working_directory`` to contents; directories
  are implied by the paths (``utils/x.py`` makes ``utils/``). A path given as ``./p``,
  ``p/`` or ``<working_directory>/p`` is the same path; anything else is its own path.
- Unknown tools get the prompt's ``{"error": "Action '<name>' not found"}`` (determined);
  bad arguments get ``{"error": ...}`` with free wording (the prompt gives one template for
  both, naming an action, which does not fit arguments).
- A missing file or directory is ``{"error": ...}``, the prompt's "standard file-not-found
  error"; its wording (e.g. Python's ``FileNotFoundError: [Errno 2] ...``) is free. So is
  the wording of reading, running or writing a directory (a path ending in ``/`` is
  one) and of listing a file or writing under one.
- ``list_directory_contents`` lists the directory's direct children, directories with a
  trailing ``/``, in the order the state first holds them (new files come last).
- ``write_file_content`` creates or overwrites the file (a new file keeps its place last);
  ``bytes_written`` is the content's length in UTF-8; ``success`` is true.
- ``execute_python_script`` NEVER runs anything. The config fixes only that an existing
  script runs (an observation with ``stdout``, ``stderr``, ``exit_code``) and that a
  missing one is a file-not-found error; what a run prints depends on the device (pins,
  watchdog, interrupts, memory) the state does not hold, so ``stdout``, ``stderr`` and
  ``exit_code`` are free (chosen ``""``, ``""``, ``0``). One thing the file's text does fix:
  a script that Python's parser rejects (``ast.parse``, no evaluation) stops with a
  ``SyntaxError`` before printing anything, so then ``stdout`` is ``""`` and ``exit_code``
  is ``1`` (determined) and ``stderr`` is a free traceback naming the error.
- A run changes nothing: ``environment_vars`` hold for that run only, and nothing in the
  config says a script writes files or installs packages.
- Free state: what a never-run script could have set. A script whose text can reach the
  disk (``open``, or imports ``os``/``uos``/``shutil``/``pathlib``/``io``/``tempfile``)
  leaves ``/file_system`` free, one that can start a process (``os``/``subprocess``)
  ``/installed_packages`` too; a script that does neither (the sample's) leaves none.
- ``check_environment_state`` reports ``working_directory``, ``installed_packages`` and
  ``environment_variables`` as the state holds them (determined).
"""

from __future__ import annotations

import ast
import posixpath
import warnings
from typing import Any

from occubench.twins._twin import Answer, Twin, tool

_ROOT = "."
_DISK = frozenset({"open", "os", "uos", "shutil", "pathlib", "io", "tempfile"})
"""Names through which a script's text can reach the workspace's files."""
_PROCESS = frozenset({"os", "subprocess"})
"""Modules through which a script can start a process (say, a package install)."""


class PythonWorkspaceTwin(Twin):
    """The Python debugging workspace (module doc)."""

    environment = "env_e2c8a2ad7c59"

    # The config's errors.

    def error(self, message: str, code: str | None = None) -> Answer:
        """``{"error": message}`` with the wording free."""
        return Answer(observation={"error": message}, free=["/error"])

    def unknown_tool(self, tool_name: str) -> Answer:
        """The prompt's own words for an undefined action."""
        return Answer(observation={"error": f"Action '{tool_name}' not found"})

    def _missing(self, path: str) -> Answer:
        return self.error(f"FileNotFoundError: [Errno 2] No such file or directory: '{path}'")

    # The file system.

    @property
    def _files(self) -> dict[str, str]:
        files: dict[str, str] = self.state["file_system"]
        return files

    def _path(self, given: str) -> str:
        """The state's key for a path as the agent wrote it."""
        path = given.strip()
        cwd = str(self.state.get("working_directory", "")).rstrip("/")
        if cwd and (path == cwd or path.startswith(cwd + "/")):
            path = path[len(cwd) :].lstrip("/") or _ROOT
        return posixpath.normpath(path) if path else _ROOT

    def _is_directory(self, path: str) -> bool:
        return path == _ROOT or any(key.startswith(path + "/") for key in self._files)

    def _file(self, given: str) -> str | Answer:
        """The state's key of the file at ``given``, or the error of opening it."""
        path = self._path(given)
        if path in self._files:
            return path
        if self._is_directory(path):
            return self._a_directory(given)
        return self._missing(given)

    def _a_directory(self, given: str) -> Answer:
        return self.error(f"IsADirectoryError: [Errno 21] Is a directory: '{given}'")

    @tool
    def list_directory_contents(self, arguments: dict[str, Any]) -> Answer:
        """The directory's direct children, directories marked with a trailing slash."""
        given = arguments["directory_path"]
        path = self._path(given)
        if path in self._files:
            return self.error(f"NotADirectoryError: [Errno 20] Not a directory: '{given}'")
        if not self._is_directory(path):
            return self._missing(given)
        prefix = "" if path == _ROOT else path + "/"
        items: list[str] = []
        for key in self._files:
            if not key.startswith(prefix) or key.startswith(("/", "../")):
                continue  # outside the directory (or outside the workspace)
            head, _, rest = key[len(prefix) :].partition("/")
            item = f"{head}/" if rest else head
            if item not in items:
                items.append(item)
        return Answer(observation={"items": items})

    @tool
    def read_file_content(self, arguments: dict[str, Any]) -> Answer:
        """The file's text."""
        path = self._file(arguments["file_path"])
        if isinstance(path, Answer):
            return path
        return Answer(observation={"content": self._files[path]})

    @tool
    def write_file_content(self, arguments: dict[str, Any]) -> Answer:
        """Create or overwrite the file."""
        given = arguments["file_path"]
        path = self._path(given)
        if self._is_directory(path) or given.rstrip().endswith("/"):
            return self._a_directory(given)
        if any(path.startswith(key + "/") for key in self._files):
            return self.error(f"NotADirectoryError: [Errno 20] Not a directory: '{given}'")
        content: str = arguments["content"]
        self._files[path] = content
        return Answer(observation={"success": True, "bytes_written": len(content.encode())})

    @tool
    def execute_python_script(self, arguments: dict[str, Any]) -> Answer:
        """A run's output, never by running it: free unless the script cannot parse."""
        path = self._file(arguments["script_path"])
        if isinstance(path, Answer):
            return path
        problem = _syntax_error(self._files[path], path)
        if problem is None:
            return Answer(
                observation={"stdout": "", "stderr": "", "exit_code": 0},
                free=["/stdout", "/stderr", "/exit_code"],
                free_state=_reach(self._files[path]),
            )
        return Answer(
            observation={"stdout": "", "stderr": problem, "exit_code": 1}, free=["/stderr"]
        )

    @tool
    def check_environment_state(self, arguments: dict[str, Any]) -> Answer:
        """The working directory, packages and environment variables."""
        return Answer(
            observation={
                "cwd": self.state["working_directory"],
                "packages": list(self.state["installed_packages"]),
                "env_vars": dict(self.state["environment_variables"]),
            }
        )


def _syntax_error(source: str, path: str) -> str | None:
    """The traceback of a script Python's parser rejects (None: it parses or cannot tell).

    Only parses (``ast.parse``): nothing in the script is evaluated.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(source, filename=path)
    except SyntaxError as problem:
        where = f'  File "{path}", line {problem.lineno}'
        return f"Traceback (most recent call last):\n{where}\nSyntaxError: {problem.msg}"
    except (ValueError, RecursionError, MemoryError):
        return None
    return None


def _reach(source: str) -> list[str]:
    """The state a script could have set had it run (a parsed script; module doc).

    Reads the names its text uses and the modules it imports; nothing is evaluated. A
    text the parser cannot read through may have done anything: both are free.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ["/file_system", "/installed_packages"]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    reach = ["/file_system"] if names & _DISK else []
    return reach + (["/installed_packages"] if names & _PROCESS else [])
