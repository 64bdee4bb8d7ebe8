#!/usr/bin/env bash
# GPU speed table: µs per LL iteration at the five reference exponents of bench/anchors.csv, from one
# run on one GPU, next to the peers' figures, for both arithmetics (Goldilocks and M61·M31); then the same exponents through `prove` with the
# error checks on at their defaults (both arithmetics: BENCH_ARITHS), so that their overhead shows separately; then end-to-end
# wall times of small full tests and of a start alone; then the floor that the field arithmetic
# sets under a squaring (gpu-selftest field-rate), with the GF(M61^2) x GF(M31^2) gate (issue 24:
# its operations' rates, its floor and predicted µs/iter at each exponent's length of it).
#
#   scripts/gpu-bench.sh            # binaries from target/release
#   BIN=dir ITERS=10000 LOOP_SECS=5 scripts/gpu-bench.sh
#   EXPONENTS="1257787 82589933" scripts/gpu-bench.sh     # fewer exponents
#
# Step 2 reads prove's "loop X ms/iter": the iteration loop alone, its checks included, without
# start-up and the final checks (LL: an inline Jacobi check of the last residue on the CPU, ~22 s
# at 82,589,933; no option skips it, so the runs pay it, but the figure leaves it out). In the
# loop, LL: checkpoint reads, GMP spot checks on the other CPU cores, background Jacobi checks
# at the checkpoints while a thread is free (step 5 measures them over a longer loop). PRP: Gerbicz, L = 1000: a multiplication every
# L iterations, a check after the first block (as at every start), then at each save and every
# L^2 = 10^6 iterations; spot checks. With --iterations a PRP run builds no proof (prove makes
# one for full tests only). Wall time on an H200: about 3.5 min (measured 2026-11-26: 55 s of
# loops, ~70 s of LL's final Jacobi checks, nearly all at the two largest p, 15 start-ups, the
# bare bench, field-rate with its own bench).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-common.sh
ITERS=${ITERS:-10000}
LOOP_SECS=${LOOP_SECS:-5}
BLOCK=1000 # prove's default Gerbicz block
EXPONENTS=${EXPONENTS:-"1257787 3021377 20996011 82589933 136279841"}
# Small exponents: 2^9 and 2^10 run on the one-block kernel (one launch per batch), 2^11 to 2^13
# on the multi-pass path (plan::SMALL_MAX_LOG2 = 10 is where the two meet).
SMALL_EXPONENTS=${SMALL_EXPONENTS:-"9689 23209 44497 86243 132049"}
# speed targets, µs/iter on an H200
target() { case $1 in 1257787) echo 15 ;; 3021377) echo 25 ;; 20996011) echo 35 ;; 82589933) echo 110 ;; 136279841) echo 200 ;; esac; }

header "bare iterations: $ITERS, loop per prove run: ~$LOOP_SECS s"

# 1. The bare squaring loop (CUDA events, after warm-up).
raw=$("$BIN/gpu-selftest" bench --iters "$ITERS" $EXPONENTS) || { echo "$raw"; exit 2; }
echo "$raw"
bare() { awk -v p="$1" '$1 == p { print $3 }' <<<"$raw"; }
small=$("$BIN/gpu-selftest" bench --iters "$ITERS" $SMALL_EXPONENTS) || { echo "$small"; exit 2; }
echo "$small" | grep -v '^device'
# The same bare loop on the second arithmetic, GF(M61^2) x GF(M31^2) (issue 24), at each
# exponent's smallest length of it (2^k or 3·2^k), beside the Goldilocks figures above.
mm=$("$BIN/gpu-selftest" --arith m61m31 bench --iters "$ITERS" $EXPONENTS) || { echo "$mm"; exit 2; }
echo "m61m31:"
echo "$mm" | grep -v '^device'
bare_mm() { awk -v p="$1" '$1 == p { print $3 }' <<<"$mm"; }
bare_of() { if [ "$1" = goldilocks ]; then bare "$2"; else bare_mm "$2"; fi; } # arithmetic, p
echo
echo "| exponent | goldilocks µs/iter | m61m31 length | m61m31 µs/iter | m61m31 / goldilocks |"
echo "|---:|---:|---:|---:|---:|"
for p in $EXPONENTS; do
  g=$(bare "$p"); m=$(bare_mm "$p")
  echo "| $p | ${g:--} | $(awk -v p="$p" '$1 == p { print $2 }' <<<"$mm") | ${m:--} | $(awk -v a="${m:-0}" -v b="${g:-0}" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "-" }') |"
done
# The same figures as rows of bench/gpu-bench.csv (append them for an H200 run, then
# scripts/plot-bench.py redraws bench/plot.svg with both arithmetics).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | grep -o 'H[0-9]*' | head -1)
for a in goldilocks m61m31; do
  for p in $EXPONENTS; do
    u=$(bare_of "$a" "$p")
    [ -n "$u" ] && echo "csv: $(binaries_commit | cut -c1-7),${gpu:-unknown},$(date -u +%F),$p,$u,$a"
  done
done

# 2. Through prove, checks at their defaults; checkpoints spaced as in a full test (about 2000
# per test). N: LOOP_SECS at the bare speed, a multiple of the Gerbicz block (so that a PRP run
# ends where it was asked to). PRP also runs N0 = 2 L iterations: every run checks once after
# its first block, so the difference of the two loops, over N - N0 iterations, is the steady
# state without that check, and the rest of the short loop is what one check costs.
N0=$((2 * BLOCK))
loop_ms() { # arithmetic, then prove arguments; prints prove's loop ms/iter, or - (and prove's last lines) when it failed
  local v a=$1
  shift
  "$BIN/prove" "$@" --engine gpu --arith "$a" --state-dir "$WORK/s" >/dev/null 2>"$WORK/err"
  v=$(sed -n 's/.*, loop \([0-9.]*\) ms\/iter;.*/\1/p' "$WORK/err")
  if [ -n "$v" ]; then echo "$v"; else echo -; tail -2 "$WORK/err" >&2; fi
}
calc() { # awk program over a b [n m]; - when a or b is missing
  case " $2 $3 " in *" - "*|*"  "*) echo -; return ;; esac
  awk -v a="$2" -v b="$3" -v n="${4:-0}" -v m="${5:-0}" "BEGIN { $1 }"
}
us() { calc 'printf "%.1f", a * 1000' "$1" 0; }
overhead() { calc 'printf "%+.1f%%", 100 * (a / b - 1)' "$1" "$2"; }
# Keys "arithmetic:p"; both arithmetics (BENCH_ARITHS), each at its own bare speed.
BENCH_ARITHS=${BENCH_ARITHS:-"goldilocks m61m31"}
declare -A ll prp prp0 iters
t0=$(now)
for a in $BENCH_ARITHS; do
  for p in $EXPONENTS; do
    n=$(awk -v s="$LOOP_SECS" -v us="$(bare_of "$a" "$p")" -v b="$BLOCK" 'BEGIN { n = int(s * 1e6 / (us ? us : 100) / b) * b; print (n < 4 * b ? 4 * b : n) }')
    iters[$a:$p]=$n
    every=$((p / 2000))
    ll[$a:$p]=$(loop_ms "$a" "$p" --iterations "$n" --checkpoint-every "$every")
    prp[$a:$p]=$(loop_ms "$a" "$p" --prp --iterations "$n" --checkpoint-every "$every")
    prp0[$a:$p]=$(loop_ms "$a" "$p" --prp --iterations "$N0" --checkpoint-every "$every")
  done
done
t1=$(now)

# 3. End to end: full tests of small exponents, kernels from the disk cache (the runs above filled it).
wall() { # command...: its wall time in s, or - when it failed
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || { echo -; return; }
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}
e2e() { wall "$BIN/prove" "$1" --engine gpu --cert "$WORK/c.cbor" --state-dir "$WORK/s"; }

echo
echo "| exponent | ours µs/iter (goldilocks) | m61m31 µs/iter | LucasNTT | ratio | best peer | ratio (faster of ours) | target |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
while read -r p n us lucas ratio cudalucas prprll; do
  [[ "$p" =~ ^[0-9]+$ ]] || continue
  best=$(printf '%s\n' "$lucas" "$cudalucas" "$prprll" | grep -v '^-$' | sort -g | head -1)
  m=$(bare_mm "$p"); m=${m:--}
  ours=$(printf '%s\n' "$us" "$m" | grep -v '^-$' | sort -g | head -1)
  echo "| $p | $us | $m | $lucas | $ratio | $best | $(awk -v a="$ours" -v b="$best" 'BEGIN { printf "%.2f", a / b }') | $(target "$p") |"
done < <(tr -d '|' <<<"$raw")
echo
echo "| arith | exponent | bare µs/iter | LL+checks loop µs/iter | LL overhead | PRP+Gerbicz loop µs/iter | PRP overhead | PRP steady µs/iter (overhead) | one Gerbicz check s |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for a in $BENCH_ARITHS; do
  for p in $EXPONENTS; do
    k="$a:$p"
    u=$(bare_of "$a" "$p"); u=${u:--}
    n=${iters[$k]}
    steady=$(calc 'printf "%.1f", (b * m - a * n) / (m - n) * 1000' "${prp0[$k]}" "${prp[$k]}" "$N0" "$n")
    check=$(calc 'printf "%.2f", (a - (b * m - a * n) / (m - n)) * n / 1000' "${prp0[$k]}" "${prp[$k]}" "$N0" "$n")
    echo "| $a | $p | $u | $(us "${ll[$k]}") | $(overhead "$(us "${ll[$k]}")" "$u") | $(us "${prp[$k]}") | $(overhead "$(us "${prp[$k]}")" "$u") | $steady$([ "$steady" = - ] || echo " ($(overhead "$steady" "$u"))") | $check |"
  done
done
echo
echo "prove --iterations N: $(for a in $BENCH_ARITHS; do for p in $EXPONENTS; do printf '%s ' "${iters[$a:$p]}"; done; done)(PRP also $N0; step 2: $(secs "$t0" "$t1") s). The PRP loop"
echo "holds one Gerbicz check (L = $BLOCK squarings, a multiplication, two reads), made after the first"
echo "block of every run; a full test makes one per save (every 60 s) and one per 10^6 iterations."
echo
echo "| full test | wall s | LucasNTT | target |"
echo "|---|---:|---:|---:|"
echo "| prove 9689 --engine gpu --cert | $(e2e 9689) | 0.58 | 0.3 |"
echo "| prove 86243 --engine gpu --cert | $(e2e 86243) | 2.25 | 1.5 |"
echo "| prove 9689 --cert (engine auto: the CPU) | $(wall "$BIN/prove" 9689 --cert "$WORK/c.cbor" --state-dir "$WORK/s") | | 0.1 |"
echo "| gpu-selftest start (context and kernels, nothing run) | $(wall "$BIN/gpu-selftest" start) | | |"

# 4. The floor that the field arithmetic sets: its throughput with nothing else in the way, and
# the time a squaring's butterflies (each line DFT at its length's rate) and products take at
# those rates on each exponent's plan; then the same for GF(M61^2) x GF(M31^2) with its
# prediction against PRPLL (src/gpu/selftest/floor_m61m31.rs).
echo
"$BIN/gpu-selftest" field-rate --iters "$ITERS" $EXPONENTS | grep -v '^seed\|^device'


# 5. LL with its Jacobi checks in the loop (issue 25): LL_CHECK_SECS of iterations at each of
# LL_CHECK_EXPONENTS with a checkpoint every p/2000 iterations (as in a full test), so that the
# background GMP symbols (~31 s each at 82,589,933 on one core, --jacobi-threads at a quarter of
# the cores) overlap the loop. Prints the loop µs/iter against the bare loop timed over the same
# number of iterations just before (so both run at the same steady-state clocks: a short bare run
# is ~1% faster than a minute-long one on a warm GPU) and the checks made (their count in the
# run, and that count scaled to a full test). Target: overhead <= 1%.
LL_CHECK_SECS=${LL_CHECK_SECS:-180}
LL_CHECK_EXPONENTS=${LL_CHECK_EXPONENTS:-"82589933 136279841"}
echo
echo "| exponent | bare µs/iter ($ITERS it.) | bare, same length | LL+Jacobi loop µs/iter | overhead | iterations | jacobi_checks | per full test |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
for p in $LL_CHECK_EXPONENTS; do
  u=$(bare "$p"); u=${u:--}
  b=$(awk -v us="$u" 'BEGIN { print (us + 0 > 0 ? us : 250) }')
  n=$(awk -v s="$LL_CHECK_SECS" -v us="$b" 'BEGIN { print int(s * 1e6 / us) }')
  long=$("$BIN/gpu-selftest" bench --iters "$n" "$p" | awk -v p="$p" '$1 == p { print $3 }'); long=${long:--}
  v=$(loop_ms goldilocks "$p" --iterations "$n" --checkpoint-every $((p / 2000)) --ll-check jacobi)
  jc=$(sed -n 's/.*jacobi_checks \([0-9]*\).*/\1/p' "$WORK/err"); jc=${jc:-0}
  echo "| $p | $u | $long | $(us "$v") | $(overhead "$(us "$v")" "$long") | $n | $jc | $(awk -v c="$jc" -v p="$p" -v n="$n" 'BEGIN { printf "%d", c * p / n }') |"
done
