#!/usr/bin/env bash
# GPU PRP proofs (issue 6): a full PRP test with a proof at each power, then verify of the
# certificate on the GPU and on the CPU, and of the GIMPS proof file. Prints the test time, the
# proof's build time and size, and the verify times.
#
#   scripts/gpu-proof.sh                      # p = 1,257,787 at powers 8 and 10 (~2 min on an H200)
#   EXPONENTS="1257787 20996011" scripts/gpu-proof.sh   # 20,996,011: ~35 min per power
#   BIN=dir POWERS="8 10" scripts/gpu-proof.sh
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/gpu-common.sh
EXPONENTS=${EXPONENTS:-1257787}
POWERS=${POWERS:-8 10}

header
ROWS=()
FAILED=0
for p in $EXPONENTS; do
  for k in $POWERS; do
    t=$(now)
    "$BIN/prove" "$p" --prp --engine gpu --proof-power "$k" --cert "$WORK/c.cbor" --gimps-proof "$WORK/c.proof" \
      --state-dir "$WORK/s" >"$WORK/out" 2>"$WORK/err" || { cat "$WORK/err"; FAILED=1; continue; }
    test_s=$(secs "$t" "$(now)")
    cat "$WORK/err"
    build=$(sed -n 's/^proof: power [0-9]*, \([0-9]*\) bytes, built and checked in \([0-9.]*\) s.*/\2 s, \1 bytes/p' "$WORK/err")
    t=$(now); "$BIN/verify" "$WORK/c.cbor" --engine gpu >"$WORK/v1" 2>&1 || { cat "$WORK/v1"; FAILED=1; }
    vg=$(secs "$t" "$(now)")
    t=$(now); "$BIN/verify" "$WORK/c.cbor" --engine cpu >"$WORK/v2" 2>&1 || { cat "$WORK/v2"; FAILED=1; }
    vc=$(secs "$t" "$(now)")
    t=$(now); "$BIN/verify" --gimps-proof "$WORK/c.proof" --engine gpu >"$WORK/v3" 2>&1 || { cat "$WORK/v3"; FAILED=1; }
    vf=$(secs "$t" "$(now)")
    tail -1 "$WORK/v1"
    ROWS+=("| $p | $k | $test_s | $build | $vg | $vc | $vf |")
  done
done
echo
echo "| p | power | prove --prp wall s | proof build, size | verify cert GPU s | verify cert CPU s | verify GIMPS file GPU s |"
echo "|---:|---:|---:|---|---:|---:|---:|"
printf '%s\n' "${ROWS[@]}"
exit $FAILED
