# Sourced by the gpu-*.sh scripts: the binaries' folder, a scratch folder that keeps keys and
# saved states out of the user's directories, timing helpers, and the run's header line.
BIN=${BIN:-target/release}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export XDG_CONFIG_HOME="$WORK/config" XDG_DATA_HOME="$WORK/data"
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
# The commit the binaries were built from (their --version), not the checkout's HEAD: a copied
# tree's .git may be older than its files.
binaries_commit() { "$BIN/prove" --version 2>/dev/null | sed -n 's/.*(commit \(.*\))$/\1/p' | grep . || echo unknown; }
header() {
  echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo unknown)"
  echo "commit: $(binaries_commit)  date: $(date -u +%FT%TZ)  $*"
}
