#!/usr/bin/env bash
# Set up (idempotent) and run the test suite: `bash scripts/test.sh [pytest args]`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z "${VIRTUAL_ENV:-}" ]]; then
  [[ -d .venv ]] || python3 -m venv .venv
  . .venv/bin/activate
fi
python -m pip install -q -e ".[dev,dist,notebook,learn]"
exec python -m pytest -q -n 2 "$@"
