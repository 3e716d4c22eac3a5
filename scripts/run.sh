#!/usr/bin/env bash
# Set up (idempotent) and run the main job on a small default: `bash scripts/run.sh [kalooki args]`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z "${VIRTUAL_ENV:-}" ]]; then
  [[ -d .venv ]] || python3 -m venv .venv
  . .venv/bin/activate
fi
python -m pip install -q -e .
if [[ $# -eq 0 ]]; then
  set -- demo --variant caribbean --round 6 --hands 8 --seed 7
fi
exec kalooki "$@"
