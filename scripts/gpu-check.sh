#!/usr/bin/env bash
# shellcheck disable=SC2046 # $(af "$a"): no arguments for Goldilocks, two for the others
# GPU correctness check: the one command anyone with an NVIDIA GPU runs (CI has no GPU).
#
#   scripts/gpu-check.sh            # binaries from target/release (cargo build --release first)
#   BIN=dir scripts/gpu-check.sh    # binaries prove, verify, gpu-selftest from another folder
#   FULL=1 scripts/gpu-check.sh     # also every row of ll_res64_10000_more.txt (up to 149M)
#   STEPS="5 6 7" scripts/gpu-check.sh   # only these steps (default: all; step 3 alone takes
#                                        # ~6 min on an H200: 8.5 M iterations of full tests)
#   KNOWN_FROM=700000 STEPS=3 scripts/gpu-check.sh   # step 3 for the known primes from 700,000 on
#   ARITHS="goldilocks m61m31" scripts/gpu-check.sh   # the arithmetics steps 1-8 run for
#                                        # (default: all three; steps through prove take the others only when
#                                        # prove has --arith, else they say so and skip it)
#
# Steps:
#   1 kernels    every kernel equals the CPU twin, n = 2^2 .. 2^24 (one-block kernel up to 2^10),
#                and both arithmetics' field operations against the CPU's (Goldilocks; M61, M31, GF(p^2), CRT);
#                m61m31, fp64: every kernel against the twin stage by stage at every length of
#                2^1 .. 3·2^23 the arithmetic has (fp64: bit for bit, 2^1 .. 2^22, at the largest
#                exponent of each pair of primes), random digits and digits at the bound, and 3000
#                LL iterations of M86243 against the twin
#   2 squaring   one squaring / multiplication mod M_p equals GMP's, 200 random prime exponents,
#                then 100 of the small lengths (p = 13 .. 27,648, n <= 2^10: the one-block kernel)
#   3 known      prove --engine gpu: every known Mersenne prime exponent up to 1,398,269 is prime,
#                the next prime exponent after each is composite
#   4 residues   LL res64 after 10000 iterations equals the external table (shift 0 and random)
#   5 cert       prove 9689 (LL and PRP) --engine gpu --cert, then verify --engine cpu (GMP replay)
#   6 faults     injected bit flips on the GPU: PRP caught by Gerbicz, LL caught by spot checks,
#                right result, the certificate logs it and verifies; then a campaign of
#                FAULT_RUNS (100) runs per mode at FAULT_P (1,257,787), FAULT_ITERS (10000)
#                iterations, one random flip each: LL --ll-check double and PRP must end with 0
#                wrong res64; LL --ll-check jacobi reports its escape rate (not a failure);
#                FAULT_MODES ("double prp jacobi") and FAULT_SPOT (off | sample) pick them
#   7 resume     SIGINT during a GPU run saves (exit 130); the rerun resumes and is right
#   8 e2e        wall time of prove 9689 / 86243 --engine gpu (kernels from the disk cache)
#   9 work       prove --work-dir on the GPU takes prove's path: LL and PRP lines of M86243 with a
#                fault injected into each (LL doubly checked below 1M, PRP by Gerbicz) end with
#                right result lines; an LL line of M1257787 (Jacobi checks above 1M) has its
#                prime residue confirmed by a doubly checked rerun before its line is written
# Prints a table and exits 1 on any mismatch, 2 when no GPU is usable.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-common.sh
FULL=${FULL:-0}
KNOWN_FROM=${KNOWN_FROM:-13}     # step 3's range of known prime exponents (the whole list by
KNOWN_TO=${KNOWN_TO:-1398269}    # default; a part of it to split the step over calls)
JOBS=${JOBS:-4}
STEPS=" ${STEPS:-1 2 3 4 5 6 7 8 9} "
want_step() { [[ "$STEPS" == *" $1 "* ]]; }
ARITHS=${ARITHS:-goldilocks m61m31 fp64}
# prove's arguments for arithmetic $1 (none for Goldilocks, the default), or failure when prove
# cannot take it: the steps through prove then skip that arithmetic.
PROVE_ARITH=0
"$BIN/prove" --help 2>/dev/null | grep -q -- '--arith' && PROVE_ARITH=1
af() { [ "$1" = goldilocks ] && return 0; [ $PROVE_ARITH = 1 ] && echo "--arith $1"; }
prove_can() { # arithmetic; prints why not and fails when prove cannot run it
  [ "$1" = goldilocks ] || [ $PROVE_ARITH = 1 ] || { echo "== $1: prove has no --arith yet: steps 3 and 5-8 skip it"; return 1; }
}
# Record names: the Goldilocks rows as before, the others with the arithmetic in front.
an() { [ "$1" = goldilocks ] && echo "$2" || echo "$1 $2"; }
for b in prove verify gpu-selftest; do
  [ -x "$BIN/$b" ] || { echo "gpu-check: $BIN/$b missing (cargo build --release, or set BIN)"; exit 2; }
done

ROWS=()
FAILED=0
record() { # step, what, ok|FAIL, detail
  ROWS+=("$(printf '%-2s %-10s %-4s %s' "$1" "$2" "$3" "$4")")
  [ "$3" = ok ] || FAILED=1
  echo "== step $1 $2: $3 $4"
}
field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^\",}]*\).*/\1/p" <<<"$2" | head -1; }
is_prime() { [ "$(factor "$1" | wc -w)" -eq 2 ]; }
next_prime() { local q=$(($1 + 1)); until is_prime $q; do q=$((q + 1)); done; echo $q; }

header
if ! "$BIN/gpu-selftest" --seed 1 kernels --from 5 --to 5 >/dev/null 2>&1; then
  "$BIN/gpu-selftest" --seed 1 kernels --from 5 --to 5
  echo "gpu-check: no usable GPU"; exit 2
fi

# 1, 2: kernels and single squarings.
if want_step 1; then
for a in $ARITHS; do
if [ "$a" = goldilocks ]; then
t=$(now); out=$("$BIN/gpu-selftest" --seed 11 kernels --from 2 --to 24 2>&1); rc=$?; echo "$out"
record 1 kernels "$([ $rc -eq 0 ] && echo ok || echo FAIL)" "$(grep -c '^n=.* OK' <<<"$out") lengths OK, $(grep -c '^field.*: OK' <<<"$out") field check OK ($(secs "$t" "$(now)") s)"
else
t=$(now); out=$("$BIN/gpu-selftest" --seed 16 "$a" --from 1 --to 24 --count 0 --ll-iters 3000 --known-max 0 2>&1); rc=$?; echo "$out"
record 1 "$a kernels" "$([ $rc -eq 0 ] && echo ok || echo FAIL)" "$(grep -c "^$a n=.* OK" <<<"$out") length/digit runs OK, $(grep -c "^$a n=.*MISMATCH" <<<"$out") mismatched; $(grep -c "^$a LL .* ok" <<<"$out") LL run vs twin ok ($(secs "$t" "$(now)") s)"
fi
done
fi
if want_step 2; then
for a in $ARITHS; do
t=$(now); out=$("$BIN/gpu-selftest" --seed 12 --arith "$a" squaring --count 200 --min 1000 --max 140000000 2>&1); rc=$?; echo "$out"
record 2 "$(an "$a" squaring)" "$([ $rc -eq 0 ] && echo ok || echo FAIL)" "$(grep '^squaring:' <<<"$out") ($(secs "$t" "$(now)") s)"
# Small lengths: Goldilocks' one-block kernel; the M61·M31 lengths up to 2^12 (p <= 200,000).
if [ "$a" = goldilocks ]; then small=(--small); else small=(--min 13 --max 200000); fi
t=$(now); out=$("$BIN/gpu-selftest" --seed 13 --arith "$a" squaring --count 100 "${small[@]}" 2>&1); rc=$?; echo "$out"
record 2 "$(an "$a" "squaring small")" "$([ $rc -eq 0 ] && echo ok || echo FAIL)" "$(grep '^squaring:' <<<"$out") ($(secs "$t" "$(now)") s)"
done
fi

# 3: full LL tests of the known primes (the GPU plans start at p = 13) and their neighbours.
if want_step 3; then
for a in $ARITHS; do
prove_can "$a" || continue
rm -f "$WORK"/ll-*.res
known=$(grep -v '^#' fixtures/known_mersenne_exponents.txt | tr -s ' \n' '\n' | awk -v lo="$KNOWN_FROM" -v hi="$KNOWN_TO" '$1 >= lo && $1 <= hi')
ll_one() { # p, expected status
  local out
  # shellcheck disable=SC2046
  out=$("$BIN/prove" "$1" $(af "$a") --engine gpu --spot sample --spot-threads 2 --state-dir "$WORK/state" 2>"$WORK/ll-$1.err")
  echo "$1 $2 $(field status "$out") $(field res64 "$out")" >"$WORK/ll-$1.res"
}
t=$(now)
declare -A want=()
for p in $known; do
  want[$p]=P
  q=$(next_prime "$p")
  while grep -qx "$q" <<<"$known"; do q=$(next_prime "$q"); done
  want[$q]=C
done
for p in "${!want[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  ll_one "$p" "${want[$p]}" &
done
wait
n=${#want[@]}
right=$(cat "$WORK"/ll-*.res | awk '$2 == $3' | wc -l)
bad=$(cat "$WORK"/ll-*.res | awk '$2 != $3' | sort -n)
[ -n "$bad" ] && echo "mismatches (p expected got res64):" && echo "$bad"
record 3 "$(an "$a" known)" "$([ "$right" -eq "$n" ] && [ "$n" -gt 0 ] && echo ok || echo FAIL)" \
  "$right/$n LL tests right ($(grep -c . <<<"$known") primes $KNOWN_FROM..$KNOWN_TO and the next prime after each, $(secs "$t" "$(now)") s)"
done
fi

# 4: LL residues after 10000 iterations against the external tables.
if want_step 4; then
for a in $ARITHS; do
t=$(now)
out=$("$BIN/gpu-selftest" --seed 14 --arith "$a" residues fixtures/ll_res64_10000.txt 2>&1); rc=$?
if [ "$FULL" = 1 ]; then more=(); else more=(--max-exponent 20000000); fi
out2=$("$BIN/gpu-selftest" --seed 15 --arith "$a" residues fixtures/ll_res64_10000_more.txt "${more[@]}" 2>&1); rc2=$?
echo "$out"; echo "$out2"
rows=$(printf '%s\n%s\n' "$out" "$out2" | grep -cE ' (ok|MISMATCH)$'); okrows=$(printf '%s\n%s\n' "$out" "$out2" | grep -cE ' ok$')
record 4 "$(an "$a" residues)" "$([ $rc -eq 0 ] && [ $rc2 -eq 0 ] && echo ok || echo FAIL)" "$okrows/$rows rows ($(secs "$t" "$(now)") s)"
done
fi

# 5: a GPU certificate replayed by GMP.
if want_step 5; then
for a in $ARITHS; do
prove_can "$a" || continue
cert_pair() { # name, prove args...
  local name=$1; shift
  local out vout
  out=$("$BIN/prove" "$@" $(af "$a") --engine gpu --cert "$WORK/$name.cbor" --state-dir "$WORK/state-$a" 2>"$WORK/$name.err") || { echo "prove failed: $(tail -1 "$WORK/$name.err")"; return 1; }
  vout=$("$BIN/verify" "$WORK/$name.cbor" --engine cpu 2>&1) || { echo "verify failed: $(tail -2 <<<"$vout")"; return 1; }
  echo "$(field status "$out") res64 $(field res64 "$out"); verify: $(tail -1 <<<"$vout")"
}
for spec in "ll9689 9689" "prp9689 9689 --prp"; do
  name=${spec%% *}; args=${spec#* }
  # shellcheck disable=SC2086
  d=$(cert_pair "$name" $args); rc=$?
  record 5 "$(an "$a" "cert $name")" "$([ $rc -eq 0 ] && echo ok || echo FAIL)" "$d"
done
done
fi

# 6: faults injected in device memory.
if want_step 6; then
for a in $ARITHS; do
prove_can "$a" || continue
p=100003  # M100003 is composite
ref=$("$BIN/prove" $p --prp --engine cpu --spot off --state-dir "$WORK/state-$a" 2>/dev/null)
out=$("$BIN/prove" $p --prp $(af "$a") --engine gpu --spot off --gerbicz-block 100 --inject-fault 30000 --inject-fault 70000:5:17 \
  --cert "$WORK/fprp.cbor" --state-dir "$WORK/state-$a" 2>"$WORK/fprp.err")
errs=$(sed -n 's/.*"errors":{\([^}]*\)}.*/\1/p' <<<"$out")
# --replay: a composite from the proof alone is "proof-checked, not verified" (exit 4) above 25,000.
vout=$("$BIN/verify" "$WORK/fprp.cbor" --engine cpu --replay 2>&1); vrc=$?
ok=ok
[ -n "$(field res64 "$ref")" ] && [ "$(field res64 "$out")" = "$(field res64 "$ref")" ] || ok=FAIL
grep -q '"gerbicz_failures":2' <<<"$out" || ok=FAIL
[ $vrc -eq 0 ] || ok=FAIL
record 6 "$(an "$a" "fault PRP")" $ok "M$p res64 gpu $(field res64 "$out") cpu $(field res64 "$ref"); $errs; verify rc $vrc"
p=44497
out=$("$BIN/prove" $p $(af "$a") --engine gpu --spot full --ll-check jacobi --inject-fault 20000 --inject-fault 30000:3:40 \
  --cert "$WORK/fll.cbor" --state-dir "$WORK/state-$a" 2>"$WORK/fll.err")
errs=$(sed -n 's/.*"errors":{\([^}]*\)}.*/\1/p' <<<"$out")
vout=$("$BIN/verify" "$WORK/fll.cbor" --engine cpu 2>&1); vrc=$?
ok=ok
[ "$(field status "$out")" = P ] || ok=FAIL
# Each flip is caught once, by its spot window or (sometimes first) a checkpoint's Jacobi check.
grep -q '"rollbacks":2' <<<"$out" || ok=FAIL
[ $vrc -eq 0 ] || ok=FAIL
record 6 "$(an "$a" "fault LL")" $ok "M$p status $(field status "$out"); $errs; verify rc $vrc"
# The campaign: references from GMP, then one random flip per GPU run.
# FAULT_MODES picks the campaigns, FAULT_SPOT the spot checks' mode during them (off: the run's
# own checks alone are measured; sample: as a user runs).
p=${FAULT_P:-1257787}; runs=${FAULT_RUNS:-100}; n=${FAULT_ITERS:-10000}; spot=${FAULT_SPOT:-off}
RANDOM=6
declare -A fref=()
fref[jacobi]=$(field res64 "$("$BIN/prove" $p --engine cpu --spot off --ll-check jacobi --iterations $n --state-dir "$WORK/state-$a" 2>/dev/null)")
fref[double]=${fref[jacobi]}
fref[prp]=$(field res64 "$("$BIN/prove" $p --prp --engine cpu --spot off --iterations $n --state-dir "$WORK/state-$a" 2>/dev/null)")
for mode in ${FAULT_MODES:-double prp jacobi}; do
  t=$(now); right=0; wrong=0; stopped=0; caught=0
  if [ $mode = prp ]; then margs=(--prp); else margs=(--ll-check $mode); fi
  for ((i = 0; i < runs; i++)); do
    f="$((1 + (RANDOM << 15 | RANDOM) % n)):$(((RANDOM << 15 | RANDOM) % (p / 16))):$((RANDOM % 64))"
    out=$("$BIN/prove" $p $(af "$a") --engine gpu --spot "$spot" "${margs[@]}" --iterations $n --inject-fault "$f" \
      --state-dir "$WORK/state-$a" 2>>"$WORK/fcamp.err")
    got=$(field res64 "$out")
    grep -qE '"(double|jacobi|gerbicz)_failures"' <<<"$out" && caught=$((caught + 1))
    if [ -z "$got" ]; then stopped=$((stopped + 1))
    elif [ "$got" = "${fref[$mode]}" ]; then right=$((right + 1))
    else wrong=$((wrong + 1)); echo "wrong: M$p $mode fault $f res64 $got (want ${fref[$mode]})"; fi
  done
  ok=ok
  [ -n "${fref[$mode]}" ] || ok=FAIL
  [ $mode = jacobi ] || [ $wrong -eq 0 ] || ok=FAIL
  [ $mode = jacobi ] || [ $stopped -eq 0 ] || ok=FAIL
  record 6 "$(an "$a" "faults $mode")" $ok "M$p, spot $spot, $runs runs of $n iterations, one flip each: $right right, $wrong wrong, $stopped stopped, $caught caught by a check ($(secs "$t" "$(now)") s)"
done
done
fi

# 7: interrupt and resume on the GPU.
if want_step 7; then
for a in $ARITHS; do
prove_can "$a" || continue
p=1257787
timeout --foreground --preserve-status -s INT 6 "$BIN/prove" $p $(af "$a") --engine gpu --save-every 1 --state-dir "$WORK/state-$a" >/dev/null 2>"$WORK/int.err"; irc=$?
out=$("$BIN/prove" $p $(af "$a") --engine gpu --state-dir "$WORK/state-$a" 2>"$WORK/res.err")
ok=ok
[ $irc -eq 130 ] || ok=FAIL
grep -q 'resumed from a saved state' "$WORK/res.err" || ok=FAIL
[ "$(field status "$out")" = P ] || ok=FAIL
record 7 "$(an "$a" resume)" $ok "SIGINT exit $irc; $(grep -o 'resumed from a saved state at iteration [0-9]*' "$WORK/res.err"); status $(field status "$out")"
done
fi

# 8: end-to-end wall time with the kernels already in the disk cache (step 3 filled it).
if want_step 8; then
for a in $ARITHS; do
prove_can "$a" || continue
for p in 9689 86243; do
  t=$(now)
  out=$("$BIN/prove" $p $(af "$a") --engine gpu --cert "$WORK/e2e-$p.cbor" --state-dir "$WORK/state-$a" 2>/dev/null); rc=$?
  record 8 "$(an "$a" "e2e $p")" "$([ $rc -eq 0 ] && [ "$(field status "$out")" = P ] && echo ok || echo FAIL)" "prove $p $(af "$a") --engine gpu --cert: $(secs "$t" "$(now)") s wall"
done
done
fi

# 9: the GIMPS work loop on the GPU, through the same checks as prove.
if want_step 9; then
wd=$WORK/work
rm -rf "$wd"; mkdir -p "$wd"
printf 'Test=86243,60,1\nPRP=1,2,86243,-1,60,0\n' >"$wd/worktodo.txt"
t=$(now)
"$BIN/prove" --work-dir "$wd" --engine gpu --inject-fault 5000:7:11 >/dev/null 2>"$WORK/work1.err"; rc=$?
ll=$(grep '"worktype":"LL"' "$wd/results.json.txt" 2>/dev/null)
prp=$(grep '"worktype":"PRP-3"' "$wd/results.json.txt" 2>/dev/null)
ok=ok
[ $rc -eq 0 ] || { tail -3 "$WORK/work1.err"; ok=FAIL; }
[ "$(field status "$ll")" = P ] && [ "$(field res64 "$ll")" = 0000000000000000 ] || ok=FAIL
[ "$(field status "$prp")" = P ] && [ "$(field res64 "$prp")" = 0000000000000001 ] || ok=FAIL
[ "$(field faults_injected "$ll")" = 1 ] && [ "$(field faults_injected "$prp")" = 1 ] || ok=FAIL
[ "$(field double_iterations "$ll")" -ge 86241 ] 2>/dev/null || ok=FAIL # every iteration, and the redone ones
record 9 "work faults" $ok "M86243 LL $(field res64 "$ll") (double_checks $(field double_checks "$ll"), rollbacks $(field rollbacks "$ll")), PRP-3 $(field res64 "$prp") (errors.gerbicz $(field gerbicz "$prp"), spot_failures $(field spot_failures "$prp" | grep . || echo 0), rollbacks $(field rollbacks "$prp")), a fault in each ($(secs "$t" "$(now)") s)"
printf 'Test=1257787,60,1\n' >"$wd/worktodo.txt"
t=$(now)
"$BIN/prove" --work-dir "$wd" --engine gpu >/dev/null 2>"$WORK/work2.err"; rc=$?
ll=$(grep '"exponent":1257787' "$wd/results.json.txt" 2>/dev/null)
ok=ok
[ $rc -eq 0 ] || { tail -3 "$WORK/work2.err"; ok=FAIL; }
[ "$(field status "$ll")" = P ] && [ "$(field confirmation_reruns "$ll")" = 1 ] || ok=FAIL
grep -q 'the LL residue says prime; confirming it' "$WORK/work2.err" || ok=FAIL
record 9 "work confirm" $ok "M1257787 LL $(field status "$ll"), confirmation_reruns $(field confirmation_reruns "$ll"), double_checks $(field double_checks "$ll") ($(secs "$t" "$(now)") s)"
fi

echo
echo "step what       ok   detail"
printf '%s\n' "${ROWS[@]}"
[ $FAILED -eq 0 ] && echo "gpu-check: ALL PASSED" || echo "gpu-check: FAILED"
exit $FAILED
