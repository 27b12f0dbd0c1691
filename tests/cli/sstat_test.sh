#!/bin/bash
# sstat on a running job: each node's agent sums its steps' processes from /proc, sstat combines
# the nodes. A two-node step of four tasks that each hold 60 MB and spin a CPU for a while shows
# 4 tasks, a MaxRSS of at least two tasks' memory on one node, and CPU time; the batch step and
# -a, the parsable outputs, --helpformat and the errors read as Slurm's.
set -euo pipefail
drover="$1"
root_dir="$2"
source "$(dirname "$0")/cluster.sh"
start_cluster sstat --conf "$root_dir/examples/demo/slurm.conf"
cd "$state/work"
cat > hold.py <<'PY'
import time
x = bytearray(60 * 1024 * 1024)
# CPU time, not wall time: on a loaded machine two seconds of wall time can be under one
# second of CPU, which AveCPU prints as 00:00:00.
while time.process_time() < 1.5:
    pass
time.sleep(120)
PY
job=$(sbatch --parsable -N2 -o out.txt --wrap "srun -n4 python3 $PWD/hold.py")
ready() {
  local rss
  rss=$(sstat -n -P -j "$job" -o MaxRSS,NTasks,AveCPU 2>/dev/null) || return 1
  [[ "$rss" == *"|4|"* ]] || return 1
  # At least two tasks' 60 MB on the node that holds the most: 120 MB and more, in M or G.
  python3 -c "import sys; v=sys.argv[1]; n=float(v[:-1]); u=v[-1]; sys.exit(0 if (u=='G' or (u=='M' and n>=110)) else 1)" "${rss%%|*}" || return 1
  [ "${rss##*|}" != "00:00:00" ]
}
poll 250 ready || fail "sstat never showed the step's memory and CPU: $(sstat -j "$job" -o JobID,MaxRSS,NTasks,AveCPU 2>&1)"
[ "$(sstat -n -P -j "$job" -o JobID)" = "$job.0" ] || fail "sstat -j without a step: $(sstat -n -P -j "$job" -o JobID)"
[ "$(sstat -n -P -a -j "$job" -o JobID | sort | tr '\n' ' ')" = "$job.0 $job.batch " ] ||
  fail "sstat -a: $(sstat -n -P -a -j "$job" -o JobID)"
[ "$(sstat -n -P -j "$job.batch" -o JobID,NTasks)" = "$job.batch|1" ] || fail "sstat of the batch step"
sstat -p -j "$job" -o JobID,MaxRSSNode | head -1 | grep -qx 'JobID|MaxRSSNode|' || fail "sstat -p header"
sstat -e | grep -q "TRESUsageInMax" || fail "sstat --helpformat"
sstat -j "$job" -o Bogus 2>"$state/err.txt" && fail "sstat took a bogus field"
grep -q 'Invalid field requested: "Bogus"' "$state/err.txt" || fail "bogus field: $(cat "$state/err.txt")"
sstat 2>"$state/err.txt" && fail "sstat without -j succeeded"
grep -q "You didn't give me any jobs to stat" "$state/err.txt" || fail "no -j: $(cat "$state/err.txt")"
scancel "$job"
echo "PASS"
