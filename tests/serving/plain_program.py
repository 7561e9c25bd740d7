"""Agent programs for the tests that never reach the MCP endpoint: the standard library only.

    python plain_program.py hang PID_FILE [DAEMON_PID_FILE]
    python plain_program.py escape DAEMON_PID_FILE [clean|closed]
    python plain_program.py instruction OUT_FILE

``hang`` writes its pid first (before anything slow), leaves a daemon when a second file
is given, then sleeps. ``escape`` leaves a daemon and prints an answer and exits 0. The
daemon is double-forked into a session of its own (``setsid``), so it is in neither the
program's process group nor its session; it keeps standard output and error open,
writes its pid and sleeps. With ``clean`` it replaces its environment with an empty one
(a fresh interpreter, ``execve``), so that only the pipes it holds give it away; with
``closed`` it keeps its environment but closes the pipes (``/dev/null`` in their place).
``instruction`` writes what it was given (the ``OCCUBENCH_INSTRUCTION`` variable, or null
when it is unset, and the text of ``OCCUBENCH_INSTRUCTION_FILE``) to OUT_FILE as JSON.
"""

import json
import os
import sys
import time


def write_pid(path: str) -> None:
    """This process's pid in ``path``, whole or not at all (written, then renamed)."""
    partial = f"{path}.partial"
    with open(partial, "w") as out:
        out.write(str(os.getpid()))
    os.replace(partial, path)


def sleep_forever() -> None:
    while True:
        time.sleep(3600)


def daemon(pid_file: str, ready: int, closed: bool = False) -> None:
    """Write the pid, tell the program (one byte on ``ready``), sleep holding the pipes."""
    if closed:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
    write_pid(pid_file)
    os.write(ready, b"x")
    os.close(ready)
    sleep_forever()


def leave_daemon(pid_file: str, how: str = "") -> None:
    """Double-fork the daemon; return once it has written its pid."""
    ready_read, ready_write = os.pipe()
    child = os.fork()
    if child == 0:
        os.setsid()
        if os.fork() == 0:
            os.close(ready_read)
            if how == "clean":
                os.set_inheritable(ready_write, True)
                argv = [sys.executable, "-S", __file__, "daemon", pid_file, str(ready_write)]
                os.execve(sys.executable, argv, {})
            daemon(pid_file, ready_write, closed=how == "closed")
        os._exit(0)
    os.close(ready_write)
    os.waitpid(child, 0)
    if os.read(ready_read, 1) != b"x":
        sys.exit("the daemon did not start")


def main(mode: str, args: list[str]) -> None:
    if mode == "hang":
        write_pid(args[0])
        if len(args) > 1:
            leave_daemon(args[1])
        sleep_forever()
    elif mode == "escape":
        leave_daemon(*args)
        print("escaped, and this is my answer")
    elif mode == "daemon":
        daemon(args[0], int(args[1]))
    elif mode == "instruction":
        with open(os.environ["OCCUBENCH_INSTRUCTION_FILE"], encoding="utf-8") as given:
            text = given.read()
        seen = {"variable": os.environ.get("OCCUBENCH_INSTRUCTION"), "file": text}
        with open(args[0], "w", encoding="utf-8") as out:
            json.dump(seen, out)
        print("read the instruction")
    else:
        sys.exit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
