#!/usr/bin/env bash
# Sets up (if needed) and runs the whole test suite, real vLLM engine and frameworks included.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
# A clone of a local checkout (git clone /path/to/checkout "$tmp/p") has no ../shared beside it: use the data
# beside the checkout it was cloned from. TOKENSLIM_DATA, when set, wins (tokenslim.bench.datasets.data_dir).
origin=$(git config --get remote.origin.url 2>/dev/null || true)
if [ -z "${TOKENSLIM_DATA:-}" ] && [ ! -d ../shared/data ] && [ -n "$origin" ] && [ -d "$origin/../shared/data" ]; then
  export TOKENSLIM_DATA="$(cd "$origin/../shared/data" && pwd)"
fi
exec python3 -m pytest "$@"
