#!/usr/bin/env bash
# Lays out two example dump folders from the bundled real XLA dumps (tests/data/seeds), under the file names
# XLA gives them. Run 2 holds a second module and a GPU module, so the runs differ; and a small jit_step module
# (tests/fixtures/gate) whose temp buffer grows in run 2 at model.py:123, for the memory gate to catch; and
# jit_mlp (tests/fixtures/report), whose live ranges give the HTML report's memory charts a change to overlay.
#   scripts/make-example-runs.sh OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:?usage: make-example-runs.sh OUT_DIR}"
SEEDS=tests/data/seeds
seed() { ls "$SEEDS"/"$1"_*.txt; }
rm -rf "$OUT/nightly-2026-11-01" "$OUT/nightly-2026-11-02"
mkdir -p "$OUT/nightly-2026-11-01" "$OUT/nightly-2026-11-02"
for run in nightly-2026-11-01 nightly-2026-11-02; do
  cp "$(seed 000)" "$OUT/$run/module_0001.jit_splash_attention_kernel.after_optimizations-buffer-assignment.txt"
  cp "$(seed 003)" "$OUT/$run/module_0001.jit_splash_attention_kernel.after_optimizations.txt"
  cp "$(seed 001)" "$OUT/$run/1766453541462737132-jit_splash_attention_kernel-00-hlo-static-bundle-profile.txt"
done
cp "$(seed 002)" "$OUT/nightly-2026-11-02/module_0002.jit_train_step.after_optimizations-buffer-assignment.txt"
cp "$(seed 004)" "$OUT/nightly-2026-11-02/module_0003.SyncTensorsGraph.105.sm_8.0_gpu_after_optimizations-buffer-assignment.txt"
GATE=tests/fixtures/gate
STEP=module_0001.jit_step.after_optimizations-buffer-assignment.txt
cp "$GATE/base/$STEP" "$OUT/nightly-2026-11-01/module_0004.jit_step.after_optimizations-buffer-assignment.txt"
cp "$GATE/head/$STEP" "$OUT/nightly-2026-11-02/module_0004.jit_step.after_optimizations-buffer-assignment.txt"
MLP=module_0007.jit_mlp.after_optimizations-buffer-assignment.txt
cp tests/fixtures/report/base/$MLP "$OUT/nightly-2026-11-01/$MLP"
cp tests/fixtures/report/head/$MLP "$OUT/nightly-2026-11-02/$MLP"
echo "example runs in $OUT: nightly-2026-11-01 (5 files), nightly-2026-11-02 (7 files)"
