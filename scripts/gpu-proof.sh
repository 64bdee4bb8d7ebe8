#!/usr/bin/env bash
# GPU PRP proofs: a full PRP test with a proof at each power, then verify of the
# certificate on the GPU and on the CPU, and of the GIMPS proof file. Prints the test time, the
# proof's build time and size, and the verify times.
#
#   scripts/gpu-proof.sh                      # p = 1,257,787 at powers 8 and 10 (~2 min on an H200)
#   EXPONENTS="1257787 20996011" scripts/gpu-proof.sh   # 20,996,011: ~25 min per power (H200)
#   BIN=dir POWERS="8 10" scripts/gpu-proof.sh
#   STATE=.gpustate MAX_SECONDS=560 EXPONENTS=20996011 POWERS=8 scripts/gpu-proof.sh
#       # a test longer than one call: stops it after MAX_SECONDS (SIGINT: it saves) and exits 3;
#       # the same command again resumes it from STATE (and the same signing key), until it ends
#   CPU_VERIFY=0 ...                          # skip the CPU verify (GMP: ~p/2^power squarings,
#                                             # ~35 min at 20,996,011 power 10); with $OUT set the
#                                             # certificate and proof file are copied there (in 15 MiB parts) to verify elsewhere
#   ALSO_POWERS="8" POWERS=10 ...             # also the power-8 proof from the power-10 run's points
#                                             # (prove --keep-proof-points; prove --proof-from-points):
#                                             # its build time, size and verify times without a second test
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-common.sh
EXPONENTS=${EXPONENTS:-1257787}
POWERS=${POWERS:-8 10}
MAX_SECONDS=${MAX_SECONDS:-0}
STATE=${STATE:-}
CPU_VERIFY=${CPU_VERIFY:-1}
ALSO_POWERS=${ALSO_POWERS:-}
state=$WORK/s
if [ -n "$STATE" ]; then
  state=$STATE/s
  export XDG_CONFIG_HOME="$STATE/config" XDG_DATA_HOME="$STATE/data"
fi
# ok_or_proof_checked: the last command verified (0), or checked a composite's proof without a
# replay (4: "proof-checked, not verified", which is what this script times)
ok_or_proof_checked() { local rc=$?; [ $rc -eq 0 ] || [ $rc -eq 4 ]; }
# verify_both NAME ARGS...: verify on the GPU, and on the CPU unless CPU_VERIFY=0; sets vg, vc
verify_both() {
  local name=$1; shift
  t=$(now); "$BIN/verify" "$@" --engine gpu >"$WORK/$name-gpu" 2>&1; ok_or_proof_checked || { cat "$WORK/$name-gpu"; FAILED=1; }
  vg=$(secs "$t" "$(now)")
  vc=skipped
  if [ "$CPU_VERIFY" = 1 ]; then
    t=$(now); "$BIN/verify" "$@" --engine cpu >"$WORK/$name-cpu" 2>&1; ok_or_proof_checked || { cat "$WORK/$name-cpu"; FAILED=1; }
    vc=$(secs "$t" "$(now)")
  fi
  tail -1 "$WORK/$name-gpu"
}
prove_timed() { if [ "$MAX_SECONDS" -gt 0 ]; then timeout --foreground -s INT "$MAX_SECONDS" "$@"; else "$@"; fi; }

header
ROWS=()
FAILED=0
for p in $EXPONENTS; do
  for k in $POWERS; do
    t=$(now)
    keep=()
    kept=$state.kept # beside the state: the points are moved there, on the same file system
    [ -z "$ALSO_POWERS" ] || { rm -rf "$kept"; keep=(--keep-proof-points "$kept"); }
    prove_timed "$BIN/prove" "$p" --prp --engine gpu --proof-power "$k" --cert "$WORK/c.cbor" --gimps-proof "$WORK/c.proof" \
      --state-dir "$state" "${keep[@]}" >"$WORK/out" 2>"$WORK/err"
    rc=$?
    if [ $rc -eq 124 ]; then
      tail -2 "$WORK/err"
      echo "M$p power $k: stopped after $MAX_SECONDS s, state saved in $state; run the same command again to resume"
      exit 3
    fi
    [ $rc -eq 0 ] || { cat "$WORK/err"; FAILED=1; continue; }
    test_s=$(secs "$t" "$(now)") # this call only, when the test was resumed
    cat "$WORK/err"
    build=$(sed -n 's/^proof: power [0-9]*, \([0-9]*\) bytes, built and checked in \([0-9.]*\) s.*/\2 s, \1 bytes/p' "$WORK/err")
    [ -z "${OUT:-}" ] || for f in cbor proof; do split -b 15M -d "$WORK/c.$f" "$OUT/M$p-power$k.$f."; done # files come back in parts of 16 MiB at most: cat them
    verify_both cert "$WORK/c.cbor"
    t=$(now); "$BIN/verify" --gimps-proof "$WORK/c.proof" --engine gpu >"$WORK/v3" 2>&1; ok_or_proof_checked || { cat "$WORK/v3"; FAILED=1; }
    vf=$(secs "$t" "$(now)")
    ROWS+=("| $p | $k | $test_s | $build | $vg | $vc | $vf |")
    for j in $ALSO_POWERS; do
      "$BIN/prove" "$p" --engine gpu --proof-from-points "$kept" --proof-power "$j" --gimps-proof "$WORK/c$j.proof" >"$WORK/pfp" 2>&1 || { cat "$WORK/pfp"; FAILED=1; continue; }
      cat "$WORK/pfp"
      build=$(sed -n 's/^proof: power [0-9]*, \([0-9]*\) bytes, built and checked in \([0-9.]*\) s.*/\2 s, \1 bytes/p' "$WORK/pfp")
      [ -z "${OUT:-}" ] || split -b 15M -d "$WORK/c$j.proof" "$OUT/M$p-power$j.proof."
      verify_both "file$j" --gimps-proof "$WORK/c$j.proof"
      ROWS+=("| $p | $j (points of the power-$k run) | — | $build | — | $vc (file) | $vg |")
    done
    rm -rf "$kept"
  done
done
echo
echo "| p | power | prove --prp wall s | proof build, size | verify cert GPU s | verify cert CPU s | verify GIMPS file GPU s |"
echo "|---:|---:|---:|---|---:|---:|---:|"
printf '%s\n' "${ROWS[@]}"
exit $FAILED
