#!/usr/bin/env bash
# Sets up (if needed) and runs the whole test suite, real vLLM engine and frameworks included.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
exec python3 -m pytest "$@"
