#!/usr/bin/env bash
# Wall time of a small whole test under `--engine auto` (the default): `prove P` RUNS times
# (default 9689, 10 runs), once bare and once with `--cert`, printing the best and the median wall
# time, the CPU time (user+sys) of the median run, and the engine auto chose. Issue 28's target:
# `prove 9689` <= 0.1 s wall on a GPU machine, by choosing the CPU; PASS when the median wall
# time is at or under LIMIT (0.1). Runs anywhere (no GPU needed); the machine's load is printed, since
# other work on the cores moves the wall time.
#
#   scripts/bench-prove-small.sh                # 9689, 10 runs each
#   P=86243 RUNS=3 LIMIT=2 scripts/bench-prove-small.sh
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release}
P=${P:-9689}
RUNS=${RUNS:-10}
LIMIT=${LIMIT:-0.1}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export XDG_CONFIG_HOME="$WORK/config" XDG_DATA_HOME="$WORK/data"
commit=$("$BIN/prove" --version 2>/dev/null | sed -n 's/.*(commit \(.*\))$/\1/p')
echo "commit: ${commit:-unknown} (the binaries')  date: $(date -u +%FT%TZ)  cores: $(nproc)  load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$BIN/prove" "$P" --cert "$WORK/warm.cbor" > /dev/null 2> "$WORK/first" || { cat "$WORK/first"; exit 1; } # creates the key
grep '^engine auto' "$WORK/first" || echo "engine: (no auto line)"
# Does auto touch CUDA for this exponent? (the dynamic loader names every library it looks for)
cuda=$(LD_DEBUG=libs "$BIN/prove" "$P" 2>&1 >/dev/null | grep -c 'find library=libcuda')
echo "CUDA looked for: $([ "$cuda" -gt 0 ] && echo "yes ($cuda times)" || echo no)"
# Where one run's wall time goes (MERSENNE_CERT_TRACE marks, ms since the start).
MERSENNE_CERT_TRACE=1 "$BIN/prove" "$P" --cert "$WORK/t.cbor" 2>&1 >/dev/null | awk '
  /^trace:/ { ms = $2 + 0; name = $0; sub(/^trace: *[0-9.]+ ms +/, "", name); at[name] = ms; last = ms }
  END {
    split("args parsed|engine opening|engine open|run: spot threads started|run: last iteration done|run finished|certificate signed|certificate written|state cleared|exit", m, "|")
    printf "breakdown (ms): start %.1f, choice+engine %.1f, loop %.1f, final checks %.1f, certificate %.1f (signed %.1f, written with fsyncs %.1f), clean-up %.1f, total %.1f\n",
      at[m[1]], at[m[3]] - at[m[2]], at[m[5]] - at[m[4]], at[m[6]] - at[m[5]], at[m[8]] - at[m[6]],
      at[m[7]] - at[m[6]], at[m[8]] - at[m[7]], at[m[10]] - at[m[8]], last }'
status=0
for mode in bare cert; do
  extra=()
  [ "$mode" = cert ] && extra=(--cert "$WORK/c.cbor")
  : > "$WORK/times"
  for ((i = 0; i < RUNS; i++)); do
    /usr/bin/time -f "%e %U %S" -o "$WORK/t" "$BIN/prove" "$P" "${extra[@]}" > /dev/null 2> "$WORK/err" \
      || { cat "$WORK/err"; exit 1; }
    cat "$WORK/t" >> "$WORK/times"
  done
  sort -n "$WORK/times" | awk -v p="$P" -v mode="$mode" -v limit="$LIMIT" '
    { wall[NR] = $1; cpu[NR] = $2 + $3 }
    END {
      m = int((NR + 1) / 2)
      ok = (wall[m] <= limit)
      printf "prove %s (%s): best %.3f s, median %.3f s wall (cpu %.3f s) over %d runs; %s (target <= %s s)\n",
        p, mode, wall[1], wall[m], cpu[m], NR, ok ? "PASS" : "FAIL", limit
      exit !ok }' || status=1
done
exit $status
