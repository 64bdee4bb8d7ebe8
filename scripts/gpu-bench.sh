#!/usr/bin/env bash
# GPU speed table (issues 3 and 5): µs per LL iteration at the ANCHORS.md exponents, from one
# run on one GPU, next to the peers' figures, then the same exponents through `prove` with the
# error checks on (LL: GMP spot checks + Jacobi; PRP: Gerbicz, L = 1000) so their overhead shows
# separately, then end-to-end wall times of small full tests.
#
#   scripts/gpu-bench.sh            # binaries from target/release
#   BIN=dir ITERS=10000 scripts/gpu-bench.sh
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-common.sh
ITERS=${ITERS:-10000}
EXPONENTS="1257787 3021377 20996011 82589933 136279841"
# Small lengths (2^9, 2^12, 2^12, 2^13): the one-block kernel, one launch per batch.
SMALL_EXPONENTS="9689 44497 86243 132049"
# issue 5's targets, µs/iter on an H200
target() { case $1 in 1257787) echo 15 ;; 3021377) echo 25 ;; 20996011) echo 35 ;; 82589933) echo 110 ;; 136279841) echo 200 ;; esac; }

header "iterations: $ITERS"

# 1. The bare squaring loop (CUDA events, after warm-up).
raw=$("$BIN/gpu-selftest" bench --iters "$ITERS" $EXPONENTS) || { echo "$raw"; exit 2; }
echo "$raw"
small=$("$BIN/gpu-selftest" bench --iters "$ITERS" $SMALL_EXPONENTS) || { echo "$small"; exit 2; }
echo "$small" | grep -v '^device'

# 2. Through prove, checks on; checkpoints spaced as in a full test (about 2000 per test).
ms_per_iter() { sed -n 's/.*, \([0-9.]*\) ms\/iter.*/\1/p' "$1" | tail -1; }
declare -A ll prp
for p in $EXPONENTS; do
  every=$((p / 2000)); [ "$every" -gt "$ITERS" ] && every=$ITERS
  "$BIN/prove" "$p" --engine gpu --iterations "$ITERS" --checkpoint-every "$every" --state-dir "$WORK/s" >/dev/null 2>"$WORK/ll.err" \
    && ll[$p]=$(awk -v m="$(ms_per_iter "$WORK/ll.err")" 'BEGIN { printf "%.1f", m * 1000 }') || ll[$p]=-
  "$BIN/prove" "$p" --prp --engine gpu --iterations "$ITERS" --checkpoint-every "$every" --state-dir "$WORK/s" >/dev/null 2>"$WORK/prp.err" \
    && prp[$p]=$(awk -v m="$(ms_per_iter "$WORK/prp.err")" 'BEGIN { printf "%.1f", m * 1000 }') || prp[$p]=-
done

# 3. End to end: full tests of small exponents, kernels from the disk cache (the runs above filled it).
e2e() {
  local t0 t1
  t0=$(date +%s.%N)
  "$BIN/prove" "$1" --engine gpu --cert "$WORK/c.cbor" --state-dir "$WORK/s" >/dev/null 2>&1 || { echo -; return; }
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}

echo
echo "| exponent | ours µs/iter | LucasNTT | ratio | best peer | ratio | target | LL+checks | PRP+Gerbicz |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
while read -r p n us lucas ratio cudalucas prprll; do
  [[ "$p" =~ ^[0-9]+$ ]] || continue
  best=$(printf '%s\n' "$lucas" "$cudalucas" "$prprll" | grep -v '^-$' | sort -g | head -1)
  echo "| $p | $us | $lucas | $ratio | $best | $(awk -v a="$us" -v b="$best" 'BEGIN { printf "%.2f", a / b }') | $(target "$p") | ${ll[$p]} | ${prp[$p]} |"
done < <(tr -d '|' <<<"$raw")
echo
echo "| full test | wall s | LucasNTT | target |"
echo "|---|---:|---:|---:|"
echo "| prove 9689 --engine gpu --cert | $(e2e 9689) | 0.58 | 0.3 |"
echo "| prove 86243 --engine gpu --cert | $(e2e 86243) | 2.25 | 1.5 |"
