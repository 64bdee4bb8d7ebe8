# Sourced by the gpu-*.sh scripts: the binaries' folder, a scratch folder that keeps keys and
# saved states out of the user's directories, timing helpers, and the run's header line.
BIN=${BIN:-target/release}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export XDG_CONFIG_HOME="$WORK/config" XDG_DATA_HOME="$WORK/data"
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
header() {
  echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo unknown)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)  date: $(date -u +%FT%TZ)  $*"
}
