#!/bin/sh
# Claude Code (npm @anthropic-ai/claude-code) as an occubench agent program:
#   occubench run ... --agent-model MODEL --agent-command 'sh run_claude.sh'
# Headless (-p), the task on standard input, the sample's MCP endpoint its only tools
# (built-in tools off, MCP servers from --mcp-config only, the server's tools allowed
# without asking), its model through the bridge: occubench sets ANTHROPIC_BASE_URL and
# ANTHROPIC_API_KEY (--bare reads only that key), and OCCUBENCH_MODEL names the model.
# A fresh configuration folder per sample: no user settings, memory or sessions carried
# over; non-essential traffic (updates, telemetry, error reports) is off.
# CLAUDE names the executable (default: claude on PATH).
set -eu
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
cat > "$work/mcp.json" <<JSON
{"mcpServers": {"occubench": {"type": "http", "url": "$OCCUBENCH_MCP_URL",
  "headers": {"Authorization": "Bearer $OCCUBENCH_MCP_TOKEN"}}}}
JSON
CLAUDE_CONFIG_DIR="$work/config" CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
  "${CLAUDE:-claude}" -p --bare --no-session-persistence --model "$OCCUBENCH_MODEL" \
  --tools "" --mcp-config "$work/mcp.json" --strict-mcp-config \
  --allowedTools mcp__occubench < "$OCCUBENCH_INSTRUCTION_FILE"
