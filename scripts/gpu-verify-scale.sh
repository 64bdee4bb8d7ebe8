#!/usr/bin/env bash
# Multi-GPU replay scaling (issue 28): one command on a host with G >= 2 GPUs.
#
#   scripts/gpu-verify-scale.sh          # binaries from target/release (cargo build --release first)
#   P=20996011 scripts/gpu-verify-scale.sh   # another exponent (default 3,021,377: ~75 s test on an H200)
#   LOGS=dir MERSENNE_CERT_TRACE=1 scripts/gpu-verify-scale.sh   # keep each verify's stderr (with
#                                            # the trace: where the time before the segments goes)
#
# 1. prove P --engine gpu on GPU 0 with --replay-points 64 (64 segments at least) and a certificate;
# 2. prove 9689 with --engine auto: must choose the CPU, and take <= 0.1 s wall;
# 3. verify --replay --engine gpu --devices 0, then --devices all (G GPUs), then --engine auto
#    (G GPUs plus CPU threads); prints the times and speedup = t(1 GPU) / t(all).
#    Each verify prints, per GPU, its busy time and µs/iter (verify's "replay: gpu N: ..." lines)
#    and the GPUs' mean SM clock and power while it ran (nvidia-smi sampled every 200 ms); then
#    each GPU's µs/iter with all replaying against GPU 0's alone ("slowdown"): a slowdown with
#    steady clocks points at the host side, with falling clocks at power or heat.
# Passes (exit 0) when speedup >= 0.9*G and step 2 held; prints PASS or FAIL lines.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-common.sh
P=${P:-3021377}
for b in prove verify; do
  [[ -x $BIN/$b ]] || { echo "missing $BIN/$b: run cargo build --release first" >&2; exit 2; }
done
G=$(nvidia-smi --list-gpus 2>/dev/null | wc -l)
[[ $G -ge 1 ]] || { echo "no GPU visible to nvidia-smi" >&2; exit 2; }
header "P=$P G=$G"
fail=0

t0=$(now)
$BIN/prove "$P" --engine gpu --cert "$WORK/c.cert" --replay-points 64 --spot off >/dev/null 2>"$WORK/prove.err" \
  || { cat "$WORK/prove.err"; exit 1; }
t1=$(now)
echo "prove M$P on GPU 0: $(secs "$t0" "$t1") s; $(grep -h 'replay points' "$WORK/prove.err")"

t0=$(now)
$BIN/prove 9689 --cert "$WORK/small.cert" >/dev/null 2>"$WORK/small.err"
t1=$(now)
small=$(secs "$t0" "$t1")
echo "prove 9689 (auto): $small s wall; $(grep -h '^engine auto' "$WORK/small.err")"
if grep -q 'the CPU (GMP)' "$WORK/small.err" && awk -v t="$small" 'BEGIN { exit !(t <= 0.1) }'; then
  echo "PASS auto: prove 9689 chose the CPU, $small s <= 0.1 s"
else
  echo "FAIL auto: prove 9689 must choose the CPU and take <= 0.1 s"; fail=1
fi

run_verify() { # label, tag, args...; sets T to the wall seconds; keeps the per-GPU lines in $WORK/busy-TAG
  local label=$1 tag=$2; shift 2
  local a b smi
  nvidia-smi --query-gpu=index,clocks.sm,power.draw --format=csv,noheader,nounits -lms 200 >"$WORK/smi-$tag" 2>/dev/null &
  smi=$!
  a=$(now)
  $BIN/verify "$WORK/c.cert" "$@" >/dev/null 2>"$WORK/v.err" || { cat "$WORK/v.err"; echo "FAIL verify $label"; fail=1; }
  b=$(now)
  kill "$smi" 2>/dev/null; wait "$smi" 2>/dev/null
  T=$(secs "$a" "$b")
  [[ -n ${LOGS:-} ]] && mkdir -p "$LOGS" && cp "$WORK/v.err" "$LOGS/verify-$tag.err"
  echo "verify $label: $T s; $(grep -h '^replay: ok' "$WORK/v.err")"
  grep -h '^replay: gpu\|^replay: cpu' "$WORK/v.err" | tee "$WORK/busy-$tag" | sed 's/^/  /'
  # Mean SM clock and power per GPU over the samples where it drew 50 W more than its least (busy).
  awk -F', *' '{ g[NR] = $1; c[NR] = $2; w[NR] = $3; if (!($1 in lo) || $3 < lo[$1]) lo[$1] = $3 }
    END { for (i = 1; i <= NR; i++) if (w[i] > lo[g[i]] + 50) { n[g[i]]++; cs[g[i]] += c[i]; ws[g[i]] += w[i] }
          for (x in n) printf "  GPU %s while busy: SM clock %.0f MHz, power %.0f W (%d samples)\n", x, cs[x] / n[x], ws[x] / n[x], n[x] }' \
    "$WORK/smi-$tag" | sort
}
rate() { sed -n "s/^replay: $1: .*busy \([0-9.]*\) s, \([0-9.]*\) µs\/iter.*/\2/p" "$2"; }
run_verify "--engine gpu --devices 0" one --replay --engine gpu --devices 0; one=$T
run_verify "--engine gpu --devices all" all --replay --engine gpu --devices all; all=$T
alone=$(rate "gpu 0" "$WORK/busy-one")
for ((g = 0; g < G; g++)); do
  r=$(rate "gpu $g" "$WORK/busy-all")
  [[ -n $alone && -n $r ]] && echo "  slowdown gpu $g: $r µs/iter with $G replaying against $alone alone ($(awk -v a="$r" -v b="$alone" 'BEGIN { printf "%+.1f%%", (a / b - 1) * 100 }'))"
done
run_verify "--engine auto (all GPUs + CPU threads)" auto --replay --engine auto
speedup=$(awk -v a="$one" -v b="$all" 'BEGIN { printf "%.2f", a / b }')
if awk -v s="$speedup" -v g="$G" 'BEGIN { exit !(s >= 0.9 * g) }'; then
  echo "PASS scale: speedup $speedup on $G GPUs (>= $(awk -v g="$G" 'BEGIN { print 0.9 * g }'))"
else
  echo "FAIL scale: speedup $speedup on $G GPUs (want >= 0.9*G)"; fail=1
fi
exit $fail
