#!/usr/bin/env bash
# The GPU acceptance run of `advise --probe` (README: Contributing, "On a GPU"). Everything is in
# benchmarks/gpu_acceptance.py; this runs it with the machine's own python3 (or $PYTHON).
#
#   benchmarks/gpu_acceptance.sh --prepare       # here, once: the pure-Python wheels into .gpu-wheels/
#   benchmarks/gpu_acceptance.sh [OUTDIR]        # on the GPU machine; OUTDIR defaults to $OUT
#   benchmarks/gpu_acceptance.sh --dry [OUTDIR]  # anywhere, CPU only: the same run, and a check of its output
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-python3}" benchmarks/gpu_acceptance.py "$@"
