#!/usr/bin/env bash
# The FP64 kernels of the working tree against those of a revision (default HEAD), bit for bit,
# without a GPU: both compiled for the host (scripts/host-kernels/pipeline_io.cpp --random: blocks in
# order; the revision's a thread a block, the working tree's with the GPU's threads as fibers
# for seed 1 and one thread for seed 2) and run on the same random tables and values at 540
# shapes (R = 2^0 … 2^9, C = 2^1 … 2^13, n ≤ 2^18, segments of 2, 4 and 8 digits, two seeds;
# every head pass, fused row pass and segment walk the kernels have): fp_fwd, fp_rows (square
# and product), fp_inv and two launches of fp_carry. For refactors of kernels/fp64/ and
# kernels/common/: a change that should not change what is computed must pass; it does not
# replace gpu-check on a GPU for a change that should. ~5 minutes.
#   scripts/fp64-kernel-equiv.sh [REV]     (needs g++; each side is built with its own harness,
#                                          pipeline_io.cpp or, before it, fp64_io.cpp)
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-HEAD}
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/a" "$w/b"
git archive "$rev" kernels scripts/host-kernels | tar x -C "$w/a"
cp -r kernels "$w/b/"
mkdir -p "$w/b/scripts"
cp -r scripts/host-kernels "$w/b/scripts/"
# fp_carry's acquire load and release store were PTX asm alone before they had host fallbacks
# (#ifdef __CUDA_ARCH__): plain accesses in such a revision (no change in later ones).
acquire='s|asm volatile("ld.acquire.gpu.global.u32 %0, \[%1\];" : "=r"(v) : "l"(a) : "memory");|v = *(volatile const u32*)a;|'
release='s|asm volatile("st.release.gpu.global.u32 \[%0\], %1;" ::"l"(a), "r"(v) : "memory");|*(volatile u32*)a = v;|'
for d in a b; do
  for f in "$w/$d/kernels/fp64/pipeline.cuh" "$w/$d/kernels/common/pipeline.cuh"; do
    if [ -f "$f" ]; then sed -i "$acquire; $release" "$f"; fi
  done
  harness="$w/$d/scripts/host-kernels/pipeline_io.cpp"
  [ -f "$harness" ] || harness="$w/$d/scripts/host-kernels/fp64_io.cpp"
  g++ -std=c++17 -O2 -ffp-contract=off -w -I"$w/$d/scripts/host-kernels" -I"$w/$d/kernels" \
    "$harness" -o "$w/$d/run"
done
runs=0 differ=0
for lr in 0 1 2 3 4 5 7 9; do
  for lc in 1 2 3 4 5 6 7 8 9 10 11 12 13; do
    for seg in 2 4 8; do
      { [ "$seg" -gt $((1 << lc)) ] || [ $((lr + lc)) -gt 18 ]; } && continue
      for seed in 1 2; do
        # The revision's kernels a block a thread (those before the fibers of shim.h need it);
        # the working tree's with the threads the GPU's blocks have (seed 1: at most 256, fewer
        # where a tile has fewer rows or a row fewer groups of 8), or one (seed 2).
        threads="1 1"
        [ "$seed" = 1 ] && threads="$(( (1 << lr) < 256 ? (1 << lr) : 256 )) $(( (1 << lc) / 8 < 1 ? 1 : ((1 << lc) / 8 > 256 ? 256 : (1 << lc) / 8) ))"
        "$w/a/run" --threads 1 1 --random $lr $lc $seg $seed "$w/a/out"
        "$w/b/run" --threads $threads --random $lr $lc $seg $seed "$w/b/out"
        runs=$((runs + 1))
        if ! cmp -s "$w/a/out" "$w/b/out"; then
          echo "differ: R=2^$lr C=2^$lc seg=$seg seed=$seed"
          differ=$((differ + 1))
        fi
      done
    done
  done
done
echo "fp64 kernels, working tree against $rev: $runs shapes, $differ differ"
[ "$differ" -eq 0 ]
