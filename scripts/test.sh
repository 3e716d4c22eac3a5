#!/usr/bin/env bash
# Set up (idempotent) and run the test suite: `bash scripts/test.sh [pytest args]`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z "${VIRTUAL_ENV:-}" ]]; then
  [[ -d .venv ]] || python3 -m venv .venv
  . .venv/bin/activate
fi
# torch: the CPU build (the tests run on the CPU); a plain requirement would pull a multi-GB CUDA build
if ! python -c "import torch" 2>/dev/null; then
  python -m pip install -q "torch==2.13.0" \
    || python -m pip install -q "torch>=2.2,<=2.14.1" --index-url https://download.pytorch.org/whl/cpu
fi
python -m pip install -q -e ".[dev,dist,notebook,learn]"
exec python -m pytest -q -n 2 --dist worksteal "$@"
