"""The scripted OpenAI-compatible server, with a listen backlog sized for benchmarks.

``python -m occubench.reference.openai_server`` keeps socketserver's default backlog
of 5 pending connections: when a hundred samples open their first connections at once,
the kernel drops the rest of the SYNs and the clients retry them after 1 s, 3 s, ...,
which shows up as seconds of stall at 1000 ms latency. This wrapper raises the backlog
and otherwise runs the same server with the same options (``--port``, ``--latency``).
"""

from occubench.reference import openai_server
from occubench.reference._openai_server import ScriptedOpenAIServer

LISTEN_BACKLOG = 1024

if __name__ == "__main__":
    ScriptedOpenAIServer._HTTPServer.request_queue_size = LISTEN_BACKLOG
    openai_server.main()
