#!/bin/sh
# Codex CLI (npm @openai/codex) as an occubench agent program:
#   occubench run ... --agent-model MODEL --agent-command 'sh run_codex.sh'
# Headless (codex exec), the task on standard input, its model through the bridge on the
# Responses wire (a provider whose base URL is OPENAI_BASE_URL and whose key is
# OPENAI_API_KEY, both set by occubench), the sample's MCP endpoint as a server whose
# bearer token Codex reads from OCCUBENCH_MCP_TOKEN and whose tools are approved without
# asking (a headless run cannot answer a prompt). A fresh CODEX_HOME per sample (no user
# configuration, no sessions kept); its shell runs read-only and never asks.
# CODEX names the executable (default: codex on PATH).
set -eu
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
cat > "$work/config.toml" <<TOML
model = "$OCCUBENCH_MODEL"
model_provider = "occubench"
approval_policy = "never"
sandbox_mode = "read-only"
web_search = "disabled"

[model_providers.occubench]
name = "occubench bridge"
base_url = "$OPENAI_BASE_URL"
env_key = "OPENAI_API_KEY"
wire_api = "responses"

[mcp_servers.occubench]
url = "$OCCUBENCH_MCP_URL"
bearer_token_env_var = "OCCUBENCH_MCP_TOKEN"
default_tools_approval_mode = "approve"
TOML
CODEX_HOME="$work" "${CODEX:-codex}" exec --skip-git-repo-check --ephemeral \
  --cd "$work" - < "$OCCUBENCH_INSTRUCTION_FILE"
