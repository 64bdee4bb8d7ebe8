#!/usr/bin/env bash
# Issue 27: throughput of `prove --work-dir DIR --devices N` (one worker process per GPU) against
# one worker on one GPU. Each worker gets PER tests of distinct prime exponents just above P
# (first-time PRP lines, as AutoPrimeNet writes them; KIND=LL for Test= lines) in its
# worktodo-n.txt; the ratio is
#
#   (N·PER tests / wall time of N workers) / (N · PER tests / wall time of 1 worker)
#     = wall(1 worker, PER tests) / wall(N workers, N·PER tests),
#
# which issue 27 wants at 0.95 or more. Every worker's results must be there, one per line.
#
#   scripts/gpu-workers.sh                      # all GPUs, P = 1257787, 2 tests per worker
#   GPUS=2 P=3021377 PER=1 KIND=LL scripts/gpu-workers.sh
#   SHARED=1 scripts/gpu-workers.sh             # all lines in one shared worktodo.txt
#
# Besides the ratio it prints each run's rate per worker (tests per hour) next to the one-worker
# run's, and every test's summary line from progress.log: its seconds and µs/iter, and where the
# driver thread's time went (engine, host checks: spot, verdicts, saves, proof points; other),
# and the proof's build time. A worker whose "host checks" or "other" share grows with N, or
# whose tests' own seconds fall well short of the wall time, waits on its host, not its GPU.
#
# Wall time: about 2 × PER × (one test at P) plus start-ups (~3 min on H100s at the defaults).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-common.sh
P=${P:-1257787}
PER=${PER:-2}
KIND=${KIND:-PRP}
ENGINE=${ENGINE:-gpu} # ENGINE=cpu GPUS=2 P=9689 tries the script without a GPU
SHARED=${SHARED:-0}
GPUS=${GPUS:-$(nvidia-smi -L 2>/dev/null | wc -l)}
header "workers: GPUS=$GPUS P=$P PER=$PER KIND=$KIND"
if [ "$GPUS" -lt 2 ]; then echo "FAIL: needs 2 or more GPUs (found $GPUS)"; exit 1; fi

# The first $2 primes from $1 on.
primes_from() {
  awk -v n="$1" -v count="$2" 'BEGIN { while (count > 0) { p = n > 1; for (d = 2; d * d <= n; d++) if (n % d == 0) { p = 0; break }
    if (p) { print n; count-- }; n++ } }'
}
line() { if [ "$KIND" = LL ]; then echo "Test=N/A,$1,75,1"; else echo "PRP=N/A,1,2,$1,-1,75,0"; fi; }

# run N: N workers, PER lines each; prints the wall seconds.
run() {
  local n=$1 dir="$WORK/workers-$1"
  mkdir -p "$dir"
  local exps=($(primes_from "$P" $((n * PER))))
  for ((g = 0; g < n; g++)); do
    for ((j = 0; j < PER; j++)); do line "${exps[g * PER + j]}"; done > "$dir/worktodo-$g.txt"
  done
  if [ "$SHARED" = 1 ]; then cat "$dir"/worktodo-*.txt > "$dir/worktodo.txt" && rm "$dir"/worktodo-*.txt; fi
  local t0 t1
  t0=$(now)
  if ! "$BIN/prove" --work-dir "$dir" --devices "$n" --engine "$ENGINE" > "$dir/stdout" 2> "$dir/stderr"; then
    echo "FAIL: $n worker(s) exited with an error:" >&2
    tail -5 "$dir/stderr" >&2
    exit 1
  fi
  t1=$(now)
  local got
  got=$(grep -c '"exponent"' "$dir/results.json.txt")
  if [ "$got" -ne $((n * PER)) ]; then
    echo "FAIL: $n worker(s) wrote $got results, expected $((n * PER))" >&2
    exit 1
  fi
  for e in "${exps[@]}"; do
    grep -q "\"exponent\":$e," "$dir/results.json.txt" || { echo "FAIL: no result for $e" >&2; exit 1; }
  done
  secs "$t0" "$t1"
}

# The summary line of every test of run N, from its progress.log, without time stamp and path.
summaries() { grep -E ' (PRP-3|LL) [PC] \(res64' "$WORK/workers-$1/progress.log" | cut -d' ' -f3- | sed 's/; certificate .*//'; }
rate() { awk -v t="$1" -v s="$2" -v n="$3" 'BEGIN { printf "%.1f", t / s * 3600 / n }'; }

one=$(run 1) || exit 1
echo "1 worker:  $PER tests in $one s: $(rate "$PER" "$one" 1) tests/hour per worker"
summaries 1
many=$(run "$GPUS") || exit 1
echo "$GPUS workers: $((GPUS * PER)) tests in $many s: $(rate $((GPUS * PER)) "$many" "$GPUS") tests/hour per worker (one worker alone: $(rate "$PER" "$one" 1))"
summaries "$GPUS"
awk -v a="$one" -v b="$many" -v n="$GPUS" 'BEGIN {
  r = a / b
  ok = (r >= 0.95)
  printf "throughput: %d workers = %.3f x %d x one GPU (%.2f x one GPU); %s (target >= 0.95)\n", n, r, n, r * n, (ok ? "PASS" : "FAIL")
  if (!ok) exit 1 }'
