#!/usr/bin/env bash
# Run the Slurm verification path for real on this one machine: install slurm-wlm and munge from
# the distribution (apt-get, as root) when missing, bring up a single-node cluster on localhost
# (its own config and spool in $WORK, /etc/slurm untouched), make a certificate unless one is
# given, submit scripts/verify-slurm.sh's job array and merge, wait, print the merged verdict,
# check that a part made without the run's shard key is refused, and stop the daemons it started.
#
#   scripts/slurm-local.sh [CERT] [N]      (default: a fresh LL certificate of M44497, N = 4)
#
# Environment: WORK (default /tmp/mersenne-slurm), TIMEOUT (seconds to wait, default 600).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=${WORK:-/tmp/mersenne-slurm}
n=${2:-4}
timeout=${TIMEOUT:-600}
[[ $(id -u) -eq 0 ]] || { echo "$0: needs root (it installs packages and starts slurmctld, slurmd, munged)" >&2; exit 2; }

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi
(cd "$here" && scripts/gmp.sh && cargo build --release --locked --features system-gmp --bin prove --bin verify)

rm -rf "$work" && mkdir -p "$work"/{spool/ctld,spool/d,log,run,out}
host=$(hostname -s)
cpus=$(nproc)
mem=$(awk '/MemTotal/ { print int($2 / 1024 * 0.8) }' /proc/meminfo)

# munge: the key from the package, the daemon as its own user.
[[ -s /etc/munge/munge.key ]] || (umask 077 && dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none)
chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
mkdir -p /run/munge /var/log/munge /var/lib/munge && chown munge:munge /run/munge /var/log/munge /var/lib/munge
munge_started=0
if ! munge -n </dev/null >/dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged
    munge_started=1
fi

export SLURM_CONF=$work/slurm.conf
cat >"$SLURM_CONF" <<CONF
ClusterName=mersenne-local
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$work/spool/ctld
SlurmdSpoolDir=$work/spool/d
SlurmctldPidFile=$work/run/slurmctld.pid
SlurmdPidFile=$work/run/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmctldPort=6917
SlurmdPort=6918
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF

stop() {
    for d in slurmd slurmctld; do
        [[ -s $work/run/$d.pid ]] && kill "$(cat "$work/run/$d.pid")" 2>/dev/null || true
    done
    if [[ $munge_started -eq 1 && -s /run/munge/munged.pid ]]; then kill "$(cat /run/munge/munged.pid)" 2>/dev/null || true; fi
}
trap stop EXIT
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 60); do
    sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed)' && break
    sleep 1
done
echo "cluster: $(sinfo -h -o '%P %D node(s) %c CPUs %T' 2>/dev/null)"

if [[ -n ${1:-} ]]; then
    cert=$(realpath "$1")
else
    cert=$work/out/M44497.cert
    (umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$work/key" && echo >>"$work/key")
    "$here/target/release/prove" 44497 --engine cpu --checkpoint-every 500 --replay-points 32 --cert "$cert" \
        --key "$work/key" --state-dir "$work/state" >/dev/null
fi
submitted=$(VERIFY="$here/target/release/verify" CPUS=1 "$here/scripts/verify-slurm.sh" "$cert" "$n" "$work/out/verify" \
    --partition=local)
echo "$submitted" | head -1
merge=$(echo "$submitted" | sed -n 's/.*merge=\([0-9]*\).*/\1/p')
start=$(date +%s)
while squeue -h -j "$merge" 2>/dev/null | grep -q .; do
    (($(date +%s) - start < timeout)) || { echo "$0: gave up after $timeout s" >&2; squeue >&2; exit 1; }
    sleep 1
done
echo "jobs done in $(($(date +%s) - start)) s; shard logs:"
for f in "$work"/out/verify/shard.*.log; do echo "  $(basename "$f"): $(grep -h '^shard' "$f" | tail -1)"; done
echo "merged verdict ($work/out/verify/merge.out):"
sed 's/^/  /' "$work/out/verify/merge.out"
grep -q '^verified: ' "$work/out/verify/merge.out"
# A part made outside the run (here: with a key of its own, as a forger would) is refused.
verify=$here/target/release/verify
"$verify" --new-shard-key "$work/foreign.key" 2>/dev/null
"$verify" "$cert" --engine cpu --shard "0/$n" --out "$work/foreign.part" --shard-key "$work/foreign.key" >/dev/null 2>&1
parts=("$work"/out/verify/part.*)
parts[0]=$work/foreign.part
if "$verify" "$cert" --engine cpu --shard-key "$work/out/verify/shard.key" --merge "${parts[@]}" >/dev/null 2>"$work/foreign.err"; then
    echo "$0: a part made without the run's key was accepted" >&2
    exit 1
fi
echo "a part made with another key: $(grep -o 'its MAC does not match[^;]*' "$work/foreign.err" | head -1)"
