#!/usr/bin/env bash
# PRP proofs on the CPU engine: for each exponent, `prove --prp` with and without a proof (spot
# checks off, so that only the proof differs), the proof's build time and size, and `verify`
# with the proof against a full replay. Prints one Markdown table row per exponent.
#
# Usage: scripts/bench-proof-cpu.sh [P ...]   (default 9689 44497 86243; needs target/release)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=target/release
exps=("$@")
[ ${#exps[@]} -gt 0 ] || exps=(9689 44497 86243)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%s\n' "$(printf '11%.0s' $(seq 32))" >"$work/key"

secs() { # run a command, print its wall seconds (stdout/stderr to files)
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >"$work/out" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l | xargs printf '%.2f'
}

echo "| p | power | prove, no proof (s) | prove, proof (s) | proof build (s) | proof bytes | verify, proof (s) | verify, replay (s) |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
for p in "${exps[@]}"; do
  common=("$p" --prp --engine cpu --spot off --shift 1 --key "$work/key" --state-dir "$work/st")
  t_plain=$(secs "$BIN/prove" "${common[@]}" --no-proof --cert "$work/plain.cbor")
  t_proof=$(secs "$BIN/prove" "${common[@]}" --cert "$work/proof.cbor")
  line=$(grep '^proof: power' "$work/err")
  power=$(sed -E 's/^proof: power ([0-9]+).*/\1/' <<<"$line")
  bytes=$(sed -E 's/.*, ([0-9]+) bytes.*/\1/' <<<"$line")
  build=$(sed -E 's/.*checked in ([0-9.]+) s.*/\1/' <<<"$line")
  t_vproof=$(secs "$BIN/verify" "$work/proof.cbor" --engine cpu)
  t_vreplay=$(secs "$BIN/verify" "$work/plain.cbor" --engine cpu)
  echo "| $p | $power | $t_plain | $t_proof | $build | $bytes | $t_vproof | $t_vreplay |"
done
