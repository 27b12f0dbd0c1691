#!/bin/bash
# The one-shot commands' own cost: each command RUNS times (default 200) one after another on an
# idle local emulated cluster (`drover up` of the demo cluster on a temporary state directory,
# stopped at exit) holding one held job, timed with /usr/bin/time: milliseconds a run, and the
# user and system CPU it cost. Run it on two builds to compare them.
#
#   bench/commands.sh [BIN_DIR]      (default: build/bin; needs drover and its command symlinks)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(cd "${1:-$root/build/bin}" && pwd)"
runs=${RUNS:-200}
# shellcheck source=bench/timing.sh
source "$root/bench/timing.sh"
bench_state commands_bench

"$bin/drover" up --conf "$root/examples/demo/slurm.conf" --state "$state/cluster" >/dev/null
export DROVER_CONF="$state/cluster/slurm.conf"
cd "$state"
job=$("$bin/sbatch" --parsable -H --wrap=true)
for command in "sbatch -H -Q --wrap=true" "squeue -j $job" "sinfo" "scontrol show job $job" \
  "scancel -u nobody"; do
  /usr/bin/time -f "%e %U %S" -o "$state/time" \
    bash -c "for ((i = 0; i < $runs; i++)); do $bin/$command >/dev/null; done"
  read -r wall user system <"$state/time"
  awk -v c="$command" -v n="$runs" -v w="$wall" -v u="$user" -v s="$system" \
    'BEGIN { printf "%-28s %6.1f ms a run (CPU %.1f ms user, %.1f ms system)\n", c, w * 1000 / n, u * 1000 / n, s * 1000 / n }'
done
