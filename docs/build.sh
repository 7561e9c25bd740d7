#!/usr/bin/env bash
# Build the documentation site. Any warning fails the build: a broken internal link, a link
# to a heading that does not exist, a page outside the table of contents, a reference page
# that cannot be generated from the code. External links are not checked (no network in CI).
set -euo pipefail
cd "$(dirname "$0")/.."
python -m sphinx -W --keep-going -b html docs docs/_build/html "$@"
