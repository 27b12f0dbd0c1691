#!/bin/bash
# A live cluster of 10,000 emulated nodes on this machine (`drover up`: one controller, one agent
# process per 1,000 nodes), measured as issue 19 asks:
#   - the time to register every node (drover up returns once all are IDLE);
#   - controller and agents' CPU and RSS at steady state with every node idle;
#   - sinfo, squeue and scontrol show node (one) at that size;
#   - with RUNNING sleep jobs running and PENDING jobs waiting (exclusive jobs for a 16-node
#     partition, so every cycle considers them): submissions/s from 8 submitters while it is
#     busy, the mean scheduling cycle, squeue, sinfo, scontrol show node, job (one), RSS;
#   - a node death: one agent process (1,000 nodes) killed with -9, the time until those nodes
#     are DOWN and every job that ran there was requeued (SlurmdTimeout + one cycle).
#
#   bench/scale.sh [BIN_DIR]      (default: build/bin)
#   NODES=10000 PENDING=100000 SUBMITS=2000 RUNNING=500 SLURMD_TIMEOUT=30 bench/scale.sh
# (PENDING jobs as arrays of 1,000, then SUBMITS single jobs from 8 submitters, timed)
#
# Goals: registration < 60 s; squeue < 0.5 s, sinfo < 0.2 s, scontrol show node < 20 ms at
# 100,000 pending; node death noticed within SlurmdTimeout + one cycle.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(cd "${1:-$root/build/bin}" && pwd)"
nodes=${NODES:-10000}
pending_jobs=${PENDING:-100000}
running_jobs=${RUNNING:-500}
slurmd_timeout=${SLURMD_TIMEOUT:-30}
submitters=8
# shellcheck source=bench/timing.sh
source "$root/bench/timing.sh"
bench_state scale
cd "$state"  # the jobs' output files (slurm-N.out) go there, not into the caller's folder

# ---- the configuration: nodes of 64 CPUs and 8 GPUs, 32 a leaf switch ----
name() { printf 'n%05d' "$1"; }
scale_conf "$state/conf" scale "$nodes" $((pending_jobs + running_jobs + 10000)) \
  "SlurmdTimeout=$slurmd_timeout" "PartitionName=small Nodes=n[00001-00016] MaxTime=INFINITE State=UP"

pid_of() { sed -n 's/^pid=//p' "$state/cluster/pids/$1"; }
rss_mib() { awk '/^VmRSS:/ { printf "%.0f", $2 / 1024 }' "/proc/$1/status"; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
agents() { ls "$state/cluster/pids" | grep -vx ctld; }
over_agents() {  # over_agents FUNCTION: FUNCTION's figure summed over the agent processes
  local total=0
  for agent in $(agents); do total=$((total + $("$1" "$(pid_of "$agent")"))); done
  echo "$total"
}
hz=$(getconf CLK_TCK)
metric() {  # the controller's /metrics sample NAME
  curl -s "http://127.0.0.1:$(cat "$state/cluster/http.port")/metrics" | awk -v n="$1" '$1 == n { print $2 }'
}

# ---- registration ----
a=$(now)
"$bin/drover" up --conf "$state/conf/slurm.conf" --state "$state/cluster" >"$state/up.txt"
b=$(now)
export DROVER_CONF="$state/cluster/slurm.conf"
export PATH="$bin:$PATH"
ctld=$(pid_of ctld)
echo "nodes                                   $nodes in $(agents | wc -l) agent processes"
echo "drover up until every node is IDLE      $(seconds "$a" "$b") s"

# ---- steady state, idle ----
sleep 5
c0=$(cpu_ticks "$ctld") g0=$(over_agents cpu_ticks)
sleep 30
c1=$(cpu_ticks "$ctld") g1=$(over_agents cpu_ticks)
echo "idle: controller CPU                    $(awk -v d=$((c1 - c0)) -v hz="$hz" 'BEGIN { printf "%.1f", 100 * d / hz / 30 }') % of a core"
echo "idle: agents' CPU (all)                 $(awk -v d=$((g1 - g0)) -v hz="$hz" 'BEGIN { printf "%.1f", 100 * d / hz / 30 }') % of a core"
echo "idle: controller RSS                    $(rss_mib "$ctld") MiB"
echo "idle: agents' RSS (all)                 $(over_agents rss_mib) MiB"
echo "idle: sinfo                             $(median5 sinfo) s"
echo "idle: squeue                            $(median5 squeue) s"
echo "idle: scontrol show node (one)          $(median5 scontrol show node "$(name $((nodes / 2)))") s"

# ---- busy: running jobs, then the pending queue ----
submit_running() { for ((i = 0; i < $1; i++)); do sbatch -Q -p all --wrap 'sleep 3600'; done; }
per=$((running_jobs / submitters))
for ((s = 0; s < submitters; s++)); do submit_running "$per" & done
wait
for _ in $(seq 600); do
  [ "$(squeue -h -t R -p all -o %i | wc -l)" -ge $((per * submitters)) ] && break
  sleep 0.5
done
echo "running jobs                            $(squeue -h -t R -o %i | wc -l)"
# The queue: arrays of 1,000 (each task a job the scheduler considers), then single jobs from
# 8 submitters, timed.
small() { sbatch -Q -p small --exclusive "$@" --wrap 'sleep 3600'; }
for ((k = 0; k < pending_jobs / 1000; k++)); do small --array=0-999; done
submit_pending() { for ((i = 0; i < $1; i++)); do small; done; }
per=$((${SUBMITS:-2000} / submitters))
a=$(now)
for ((s = 0; s < submitters; s++)); do submit_pending "$per" & done
wait
b=$(now)
echo "busy: sbatch from $submitters submitters             $(rate $((per * submitters)) "$a" "$b") jobs/s"
echo "pending jobs                            $(squeue -h -r -t PD -o %i | wc -l)"
# Cycles at the full queue: each submission asks for one (a quiet controller runs none).
s0=$(metric drover_scheduler_cycle_seconds_sum) n0=$(metric drover_scheduler_cycle_seconds_count)
for _ in 1 2 3 4 5; do
  small
  sleep 2
done
s1=$(metric drover_scheduler_cycle_seconds_sum) n1=$(metric drover_scheduler_cycle_seconds_count)
echo "busy: scheduling cycle (mean of $((n1 - n0)))      $(awk -v s="$s0" -v t="$s1" -v a="$n0" -v b="$n1" 'BEGIN { if (b > a) printf "%.3f", (t - s) / (b - a); else print "-" }') s"
one=$(squeue -h -r -t PD -o %i | tail -1)
echo "busy: squeue                            $(median5 squeue) s"
echo "busy: sinfo                             $(median5 sinfo) s"
echo "busy: scontrol show node (one)          $(median5 scontrol show node "$(name $((nodes / 2)))") s"
echo "busy: scontrol show job (one)           $(median5 scontrol show job "$one") s"
echo "busy: squeue -j (one)                   $(median5 squeue -j "$one") s"
echo "busy: controller RSS                    $(rss_mib "$ctld") MiB"
echo "busy: agents' RSS (all)                 $(over_agents rss_mib) MiB"

# ---- a node death: the first agent process (1,000 nodes, where the jobs run) killed ----
victim=$(agents | sort -V | head -1)
served=$(sed -n 's/^droverd: [0-9]* emulated nodes (\(.*\)); .*/\1/p' "$state/cluster/logs/$victim.log" | head -1)
[ -n "$served" ] || served=$(name 1)
count=$(scontrol show hostnames "$served" | wc -l)
jobs_there=$(squeue -h -t R -w "$served" -o %i | tr '\n' ',' | sed 's/,$//')
a=$(now)
kill -9 "$(pid_of "$victim")"
down=""
while true; do
  [ -z "$down" ] && [ "$(sinfo -h -n "$served" -t down -o %D | awk '{ s += $1 } END { print s + 0 }')" -ge "$count" ] && down=$(now)
  left=0
  [ -n "$jobs_there" ] && left=$(squeue -h -t R -w "$served" -j "$jobs_there" -o %i | wc -l)
  [ -n "$down" ] && [ "$left" = 0 ] && break
  awk -v a="$a" -v b="$(now)" 'BEGIN { exit !(b - a > 600) }' && break
  sleep 0.5
done
b=$(now)
echo "node death ($count nodes, $(echo "$jobs_there" | tr ',' '\n' | grep -c .) jobs): DOWN after $(seconds "$a" "${down:-$b}") s, jobs requeued after $(seconds "$a" "$b") s (SlurmdTimeout=$slurmd_timeout)"
