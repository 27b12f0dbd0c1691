#!/bin/bash
# The commands as people run them: whole processes (start, configuration, channel, RPC, output)
# against a local emulated cluster (`drover up` on a temporary state directory, stopped at exit).
# Prints submissions/s for sequential and parallel sbatch, and the time of squeue (all, and one
# job), scontrol show job (all, and one), scontrol show node (one) and scancel with 20,000 pending
# (held) jobs: the submitted ones and held arrays. The queries of one job or node (squeue -j,
# scontrol show job ID, sacct -j, scontrol show node) are timed at 100 pending jobs too, with the
# controller's own CPU for each call: the controller filters them, so they should cost the same
# at both sizes.
#
#   bench/cli.sh [BIN_DIR]      (default: build/bin; needs drover and its command symlinks)
#
# Goals: >= 200 sequential submissions/s, >= 750/s with 8 submitters, squeue <= 0.05 s and
# scancel of 20,000 jobs <= 3 s at 20,000 pending jobs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(cd "${1:-$root/build/bin}" && pwd)"
sequential=${SEQUENTIAL:-500}
queued=${QUEUED:-20000}
submitters=8
state="$(mktemp -d /tmp/drover_cli_bench_XXXXXX)"
export XDG_STATE_HOME="$state/xdg"
cleanup() {
  "$bin/drover" down --state "$state/cluster" >/dev/null 2>&1 || true
  rm -rf "$state"
}
trap cleanup EXIT

# The demo cluster, with room for the queue.
mkdir -p "$state/conf"
cp "$root"/examples/demo/*.conf "$state/conf/"
echo "MaxJobCount=$((queued * 2))" >>"$state/conf/slurm.conf"
"$bin/drover" up --conf "$state/conf/slurm.conf" --state "$state/cluster" >"$state/up.txt"
export DROVER_CONF="$state/cluster/slurm.conf"
export PATH="$bin:$PATH"
me="$(id -un)"

# shellcheck source=bench/timing.sh
source "$root/bench/timing.sh"
submit() {  # submit N held jobs, one process each
  for ((i = 0; i < $1; i++)); do sbatch -H -Q --wrap=true; done
}
pending() { squeue -h -r -t PD -o %i | wc -l; }

echo "cluster: $(head -1 "$state/up.txt")"
echo "user: $me; $(nproc) CPUs"

# The controller's CPU (user + system) for one call of a command, in ms: 50 calls, its
# /proc/PID/stat before and after (what it does meanwhile on its own, a little, is in it).
ctld_pid=$(sed -n 's/^pid=//p' "$state/cluster/pids/ctld")
ctld_ticks() { awk '{ print $14 + $15 }' "/proc/$ctld_pid/stat"; }
ctld_ms() {
  local a b
  a=$(ctld_ticks)
  for ((i = 0; i < 50; i++)); do "$@" >/dev/null; done
  b=$(ctld_ticks)
  awk -v t=$((b - a)) -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", t * 1000 / hz / 50 }'
}
# The queries of one job and one node: each the median of 5, and the controller's CPU a call.
one_job_queries() {
  local one node
  one=$(squeue -h -r -t PD -o %i | tail -1)
  node=$(sinfo -h -N -o %N | head -1)
  echo "at $(pending) pending jobs, one job ($one) and one node, medians of 5:" \
    "squeue -j $(median5 squeue -j "$one") s," \
    "scontrol show job $(median5 scontrol show job "$one") s," \
    "sacct -j $(median5 sacct -j "$one") s," \
    "scontrol show node $(median5 scontrol show node "$node") s"
  echo "  the controller's CPU a call (50 calls):" \
    "squeue -j $(ctld_ms squeue -j "$one") ms," \
    "scontrol show job $(ctld_ms scontrol show job "$one") ms," \
    "sacct -j $(ctld_ms sacct -j "$one") ms," \
    "scontrol show node $(ctld_ms scontrol show node "$node") ms"
}
submit 100
one_job_queries

a=$(now)
submit "$sequential"
b=$(now)
echo "sbatch, $sequential sequential: $(rate "$sequential" "$a" "$b")/s ($(seconds "$a" "$b") s)"

per=$((sequential / submitters))
a=$(now)
for ((s = 0; s < submitters; s++)); do submit "$per" & done
wait
b=$(now)
echo "sbatch, $((per * submitters)) by $submitters submitters: $(rate $((per * submitters)) "$a" "$b")/s" \
  "($(seconds "$a" "$b") s)"

# Fill the queue to $queued pending jobs: held arrays of 1,000 tasks (each task is a job record
# of its own), then single jobs for the rest.
have=$(pending)
while ((queued - have >= 1000)); do
  sbatch -H -Q -a 0-999 --wrap=true
  have=$((have + 1000))
done
submit $((queued - have))
echo "queue: $(pending) pending jobs"

echo "squeue (default; pending array tasks folded), median of 5: $(median5 squeue) s"
echo "squeue -r (one line a job), median of 5: $(median5 squeue -r) s"
echo "squeue -u $me -t PD, median of 5: $(median5 squeue -u "$me" -t PD) s"
echo "scontrol show job, median of 5: $(median5 scontrol show job) s"
one_job_queries

a=$(now)
scancel -u "$me"
b=$(now)
echo "scancel -u $me of $queued pending jobs: $(seconds "$a" "$b") s"
left=$(pending)
echo "pending after scancel: $left"
