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
  set -- simulate --variant caribbean --players 4 --agents greedy,greedy,random,random --hands 20000 --seed 7 --out runs/quickstart --resume
fi
exec kalooki "$@"
