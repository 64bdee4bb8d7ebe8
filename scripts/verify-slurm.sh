#!/usr/bin/env bash
# Verify a certificate on a Slurm cluster: a job array of N shards (one task per shard, one GPU
# each where the cluster has GPUs), then the merge as a job that runs once every shard has ended.
#
#   scripts/verify-slurm.sh CERT N OUTDIR [extra sbatch options...]
#
# CERT and OUTDIR must be on storage every node sees; the sidecar CERT.points, when present, is
# found beside CERT. The run's secret, OUTDIR/shard.key (verify --new-shard-key; OUTDIR is made
# mode 0700), authenticates every part: a part made without it is refused by the merge. Prints
# the two job ids; the verdict is in OUTDIR/merge.out (exit status of the merge job: 0 verified,
# else the merge names the missing or failed segments). The merge runs after every shard ended,
# failed ones included (afterany), so that it can name what failed.
# Environment: VERIFY (the verify binary; default target/release/verify beside this script, else
# `verify` on PATH), GPUS (gres per task: 1 by default when `sinfo` lists gpu gres, else 0),
# CPUS (CPUs per task, default 2).
set -euo pipefail
if [[ $# -lt 3 ]]; then
    echo "usage: $0 CERT N OUTDIR [extra sbatch options...]" >&2
    exit 2
fi
cert=$(realpath "$1")
n=$2
out=$(realpath -m "$3")
shift 3
[[ -f $cert ]] || { echo "$0: no certificate $cert" >&2; exit 2; }
[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "$0: N must be a positive number, got '$n'" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
verify=${VERIFY:-$here/target/release/verify}
[[ -x $verify ]] || verify=$(command -v verify) || { echo "$0: no verify binary (set VERIFY)" >&2; exit 2; }
verify=$(realpath "$verify")
if [[ -z ${GPUS:-} ]]; then
    if sinfo -h -o %G 2>/dev/null | grep -q gpu; then GPUS=1; else GPUS=0; fi
fi
cpus=${CPUS:-2}
mkdir -p "$out"
chmod 700 "$out"
key=$out/shard.key
[[ -e $key ]] && { echo "$0: $key exists: a new run needs a new OUTDIR" >&2; exit 2; }
"$verify" --new-shard-key "$key"
gres=()
[[ $GPUS -gt 0 ]] && gres=(--gres="gpu:$GPUS")

# One task per shard; Slurm's CUDA_VISIBLE_DEVICES makes `--devices all` the task's own GPU(s).
array=$(sbatch --parsable --job-name=verify-shard --array="0-$((n - 1))" --cpus-per-task="$cpus" "${gres[@]}" \
    --output="$out/shard.%a.log" "$@" \
    --wrap="exec '$verify' '$cert' --shard \$SLURM_ARRAY_TASK_ID/$n --out '$out/part.'\$SLURM_ARRAY_TASK_ID --shard-key '$key' --jobs $cpus --devices all")
array=${array%%;*}
parts=$(for ((i = 0; i < n; i++)); do printf "'%s/part.%d' " "$out" "$i"; done)
merge=$(sbatch --parsable --job-name=verify-merge --dependency="afterany:$array" \
    --cpus-per-task=1 --output="$out/merge.out" "$@" \
    --wrap="exec '$verify' '$cert' --engine cpu --shard-key '$key' --merge $parts")
merge=${merge%%;*}
echo "shards: job array $array (${n} tasks, ${GPUS} GPU(s) and ${cpus} CPUs each); merge: job $merge -> $out/merge.out"
echo "array=$array merge=$merge"
