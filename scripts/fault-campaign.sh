#!/usr/bin/env bash
# Fault campaign on the CPU engine (docs/testing.md, "Fault campaigns"): N runs of `prove`, each
# with one injected bit flip at a random iteration (a third in the first 1% of the test, a third in
# the last 1%, a third anywhere), random word and bit, spot checks off, and counts how many ended
# with a wrong final residue and exit 0 (the outcome that must never happen in an exact mode).
#
#   [JOBS=J] scripts/fault-campaign.sh MODE N [SEED] [OUTDIR]
#     MODE: jacobi | double (LL with --ll-check MODE) | prp (PRP-3, Gerbicz, no proof)
#     JOBS: run J shards at once (one CPU core each; seeds SEED*1000+i, trials split evenly,
#           each in OUTDIR/shard-i), then merge them into OUTDIR/MODE.tsv and one summary line.
#
# One line per trial goes to OUTDIR/MODE.tsv (p, iteration, word, bit, res64, verdict:
# right / WRONG / stopped = non-zero exit with no result), then a summary line. Reference results
# are computed once per exponent by a fault-free `--ll-check double` (or PRP) run and cached in
# OUTDIR/ref-*. Needs target/release/prove (cargo build --release).
set -euo pipefail
mode=${1:?usage: fault-campaign.sh jacobi|double|prp N [SEED] [OUTDIR]}
n=${2:?number of trials}
seed=${3:-1}
out=${4:-target/fault-campaign}
prove=${PROVE:-target/release/prove}
[ -x "$prove" ] || { echo "no $prove: run cargo build --release first" >&2; exit 1; }
case $mode in
  jacobi | double) kindargs=(--ll-check "$mode") ;;
  prp) kindargs=(--prp --no-proof) ;;
  *) echo "MODE must be jacobi, double or prp" >&2; exit 1 ;;
esac
mkdir -p "$out"
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
# Prime exponents from 9,689 to 86,243: M_p prime for the first, last and several between.
exps=(9689 9697 9941 10007 11213 12011 15013 19937 21701 23209 30011 44497 60013 86243)
RANDOM=$seed
rand() { echo $(((RANDOM << 15 | RANDOM) % $1)); } # uniform enough below 2^30

res64() { sed -n 's/.*"res64":"\([0-9A-F]*\)".*/\1/p'; }

refdir=${REFDIR:-$out}
reference() {
  local p=$1 f="$refdir/ref-$mode-$1"
  [ "$mode" = jacobi ] && f="$refdir/ref-double-$1"
  if [ ! -s "$f" ]; then
    local args=(--ll-check double)
    [ "$mode" = prp ] && args=(--prp --no-proof)
    local tmp="$f.$$.$BASHPID"
    "$prove" "$p" --engine cpu --spot off --fresh --state-dir "$state/ref-$p" --key "$state/key" "${args[@]}" 2>/dev/null | res64 >"$tmp"
    [ -s "$tmp" ] || { rm -f "$tmp"; echo "no reference result for M$p" >&2; exit 1; }
    mv "$tmp" "$f"
  fi
  cat "$f"
}

jobs=${JOBS:-1}
if [ "$jobs" -gt 1 ]; then
  # The references first (in parallel), then the shards, then one merged log and summary.
  for p in "${exps[@]}"; do
    reference "$p" >/dev/null &
    [ "$(jobs -rp | wc -l)" -ge "$jobs" ] && wait -n
  done
  wait
  for ((i = 0; i < jobs; i++)); do
    JOBS=1 REFDIR="$refdir" PROVE="$prove" "$0" "$mode" $(((n + i) / jobs)) $((seed * 1000 + i)) "$out/shard-$i" >/dev/null &
  done
  wait
  cat "$out"/shard-*/"$mode.tsv" | grep -v '^fault campaign' >"$out/$mode.tsv"
  tally() { awk -F'\t' -v v="$1" '$6 == v' "$out/$mode.tsv" | wc -l; }
  echo "fault campaign $mode: $(wc -l <"$out/$mode.tsv") trials ($jobs shards, seed $seed): $(tally right) right, $(tally WRONG) WRONG (exit 0 with a wrong res64), $(tally stopped) stopped with an error" | tee -a "$out/$mode.tsv"
  exit 0
fi
log="$out/$mode.tsv"
: >"$log"
right=0 wrong=0 stopped=0
for ((t = 0; t < n; t++)); do
  p=${exps[$(rand ${#exps[@]})]}
  ref=$(reference "$p")
  total=$((p - 2))
  [ "$mode" = prp ] && total=$p
  edge=$((total / 100 + 1))
  case $(rand 3) in
    0) it=$((1 + $(rand edge))) ;;
    1) it=$((total - $(rand edge))) ;;
    *) it=$((1 + $(rand total))) ;;
  esac
  word=$(rand $((p / 64 + 1)))
  bit=$(rand 64)
  got=$("$prove" "$p" --engine cpu --spot off --fresh --state-dir "$state" --key "$state/key" "${kindargs[@]}" \
    --inject-fault "$it:$word:$bit" 2>/dev/null | res64 || true)
  if [ -z "$got" ]; then
    verdict=stopped stopped=$((stopped + 1))
  elif [ "$got" = "$ref" ]; then
    verdict=right right=$((right + 1))
  else
    verdict=WRONG wrong=$((wrong + 1))
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$p" "$it" "$word" "$bit" "${got:--}" "$verdict" >>"$log"
done
echo "fault campaign $mode: $n trials (seed $seed): $right right, $wrong WRONG (exit 0 with a wrong res64), $stopped stopped with an error" | tee -a "$log"
