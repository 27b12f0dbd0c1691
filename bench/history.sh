#!/bin/bash
# The job history at scale: a local emulated cluster (`drover up` on a temporary state directory,
# stopped at exit) whose store holds HISTORY finished jobs (default 1,000,000, written by
# history_fill before the controller starts: 100 users, submitted over the last 30 days), then
# PENDING held jobs (default 100,000) in the live queue. Prints the time of sacct for one user's
# last day, one job by ID and every user's last hour, and the controller's RSS with the history
# alone and with the pending jobs too.
#
#   bench/history.sh [BIN_DIR]      (default: build/bin; needs drover, its command symlinks and
#                                    history_fill, built with the benchmarks)
#
# Goals: sacct for one user's last day < 1 s with 1,000,000 jobs in the history; controller RSS
# < 500 MiB with 100,000 pending jobs and 1,000,000 in the history.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(cd "${1:-$root/build/bin}" && pwd)"
history=${HISTORY:-1000000}
queued=${PENDING:-100000}
state="$(mktemp -d /tmp/drover_history_bench_XXXXXX)"
export XDG_STATE_HOME="$state/xdg"
cleanup() {
  "$bin/drover" down --state "$state/cluster" >/dev/null 2>&1 || true
  rm -rf "$state"
}
trap cleanup EXIT

# shellcheck source=bench/timing.sh
source "$root/bench/timing.sh"
rss() {
  local pid
  pid=$(sed -n 's/^pid=//p' "$state/cluster/pids/ctld")
  awk '/^VmRSS/ { printf "%.0f MiB", $2 / 1024 }' "/proc/$pid/status"
}

mkdir -p "$state/conf" "$state/cluster/ctld"
cp "$root"/examples/demo/*.conf "$state/conf/"
echo "MaxJobCount=$((queued + 1000))" >>"$state/conf/slurm.conf"
a=$(now)
"$bin/history_fill" "$state/cluster/ctld" "$history" 100 "$(id -u)" 4
b=$(now)
echo "history written in $(seconds "$a" "$b") s ($(du -sh "$state/cluster/ctld" | cut -f1) on disk)"
a=$(now)
"$bin/drover" up --conf "$state/conf/slurm.conf" --state "$state/cluster" >"$state/up.txt"
b=$(now)
echo "cluster: $(head -1 "$state/up.txt") (up in $(seconds "$a" "$b") s)"
export DROVER_CONF="$state/cluster/slurm.conf"
export PATH="$bin:$PATH"
echo "$(nproc) CPUs; $history jobs in the history"

# One user's last day (-u: root would see everyone's without it).
me=$(id -u)
mine=$(sacct -X -n -u "$me" -S now-1days -o JobID | wc -l)
echo "sacct -u $me -S now-1days ($mine jobs), median of 5: $(median5 sacct -X -u "$me" -S now-1days) s"
echo "sacct -j $((history / 2)), median of 5: $(median5 sacct -j $((history / 2))) s"
hour=$(sacct -a -X -n -S now-1hours -o JobID | wc -l)
echo "sacct -a -S now-1hours (every user's: $hour), median of 5: $(median5 sacct -a -X -S now-1hours) s"
echo "controller RSS with the history: $(rss)"

have=0
while ((queued - have >= 1000)); do
  sbatch -H -Q -a 0-999 --wrap=true
  have=$((have + 1000))
done
echo "queue: $(squeue -h -r -t PD -o %i | wc -l) pending jobs"
echo "controller RSS with $queued pending and $history in the history: $(rss)"
# Now the user's pending jobs are in the window too.
mine=$(sacct -X -n -u "$me" -S now-1days -o JobID | wc -l)
echo "sacct -u $me -S now-1days with them ($mine jobs), median of 5: $(median5 sacct -X -u "$me" -S now-1days) s"
