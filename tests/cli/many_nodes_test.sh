#!/bin/bash
# One droverd serving many emulated nodes (drover up groups a cluster of more than 64 nodes):
# 200 nodes register through one agent process, stay alive on its batched heartbeats, run a
# multi-node job whose srun reaches each node through the one address, answer scontrol show
# slurmd for any of them, and re-adopt a running job after a kill -9. A batch job whose agent
# lost it (its spool gone) is requeued when the node registers again (BatchStartTimeout).
# Listings longer than the controller's page (10,000 jobs) come whole, each job once.
set -euo pipefail
drover="$1"
source "$(dirname "$0")/cluster.sh"

conf="$(mktemp -d "${DROVER_TEST_ROOT:-/tmp}/drover_many_conf_XXXXXX")"
new_pid=""
on_exit() {
  [ -n "$new_pid" ] && kill "$new_pid" 2>/dev/null
  rm -rf "$conf"
  cleanup_cluster
}
cat > "$conf/slurm.conf" <<'CONF'
ClusterName=many
SlurmctldHost=localhost
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=100
SlurmdTimeout=6
BatchStartTimeout=2
KillWait=2
MaxArraySize=12001
MaxJobCount=20000
NodeName=n[001-200] NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000
PartitionName=p Nodes=ALL Default=YES MaxTime=10:00 State=UP
CONF
start_cluster many --conf "$conf/slurm.conf"
trap on_exit EXIT
cd "$state/work"

# ---- one agent process for the 200 nodes, every node IDLE ----
agents=$(ls "$state/cluster/pids" | grep -vx ctld)
[ "$agents" = agent-1 ] || fail "expected one agent process, got: $agents"
grep -q "droverd: 200 emulated nodes (n\[001-200\])" "$state/cluster/logs/agent-1.log" ||
  fail "the agent's log does not name its nodes"
agent_pid=$(sed -n 's/^pid=//p' "$state/cluster/pids/agent-1")
[ "$(sinfo -h -t idle -o '%D')" = 200 ] || fail "sinfo: $(sinfo)"

# ---- heartbeats: past SlurmdTimeout no node is DOWN (they come batched, one call) ----
sleep 8
[ "$(sinfo -h -t idle -o '%D')" = 200 ] || fail "nodes stopped answering: $(sinfo)"

# ---- a 3-node job: its batch script on the first node, srun on all three ----
cat > job.sh <<'JOB'
#!/bin/bash
srun -l bash -c 'echo "$SLURMD_NODENAME"' | sort
JOB
job=$(sbatch --parsable --wait -N3 -w n010,n150,n200 -o out.txt job.sh) || fail "the 3-node job failed: $(cat out.txt)"
[ "$(cat out.txt)" = "$(printf '0: n010\n1: n150\n2: n200')" ] || fail "srun's tasks: $(cat out.txt)"

# ---- the nodes that run no script hold the job with no process of their own ----
running() { [ "$(squeue -h -j "$1" -o %T)" = RUNNING ]; }
wait_running() { poll 100 running "$1" || fail "job $1 did not start: $(squeue -j "$1")"; }
# Whether job $1 has a step listed.
has_step() { squeue -h -s -j "$1" -o %i | grep -q "^$1\."; }
held=$(sbatch --parsable -N3 -w n020,n160,n190 -o /dev/null --wrap 'sleep 300')
wait_running "$held"
spool_of() { echo "$state/cluster/spool/$1/job_$held"; }
poll 50 test -e "$(spool_of n020)/supervisor.pid" || fail "the batch node n020 has no supervisor"
for node in n160 n190; do
  poll 50 test -f "$(spool_of $node)/held" && [ ! -e "$(spool_of $node)/supervisor.pid" ] ||
    fail "$node holds job $held with a process: $(ls "$(spool_of $node)")"
done
# Every process of the job is the batch node's (this cluster's job: SLURM_CONF says which).
for proc in /proc/[0-9]*; do
  environment=$({ tr '\0' '\n' < "$proc/environ"; } 2>/dev/null || true)
  if grep -qx "SLURM_JOB_ID=$held" <<< "$environment" &&
    grep -qx "SLURM_CONF=$DROVER_CONF" <<< "$environment" &&
    ! grep -qx "SLURMD_NODENAME=n020" <<< "$environment"; then
    fail "process ${proc#/proc/} of job $held runs elsewhere: $(tr '\0' ' ' < "$proc/cmdline")"
  fi
done
# Steps still reach every node; a step left running on a held node ends with the job.
[ "$(srun --jobid="$held" -N3 -l hostname | wc -l)" = 3 ] || fail "srun into the held job"
srun --jobid="$held" -N1 -w n190 --overlap sleep 300 > /dev/null 2>&1 &
stepper=$!
poll 100 has_step "$held" || true
scancel "$held"
spools_gone() { [ ! -e "$(spool_of n160)" ] && [ ! -e "$(spool_of n190)" ] && [ ! -e "$(spool_of n020)" ]; }
poll 100 spools_gone || true  # n020's is checked by what follows, not here
[ -e "$(spool_of n160)" ] || [ -e "$(spool_of n190)" ] && fail "the held nodes did not end job $held"
wait "$stepper" 2>/dev/null || true
all_idle() { [ "$(sinfo -h -t idle -o '%D')" = 200 ]; }
poll 50 all_idle || fail "nodes still busy after the cancel: $(sinfo)"

# ---- scontrol show slurmd of any node: the one process answers for it ----
scontrol show slurmd n123 > slurmd.txt || fail "show slurmd: $(cat slurmd.txt)"
grep -q "^Slurmd PID *= $agent_pid$" slurmd.txt || fail "show slurmd: $(cat slurmd.txt)"
grep -Eq "^Last slurmctld msg time  = [0-9]{4}-" slurmd.txt ||
  fail "show slurmd: n123 never heard from the controller: $(cat slurmd.txt)"

# ---- kill -9 of the agent: a running job is re-adopted by the restarted process ----
kept=$(sbatch --parsable -w n077 -o kept.txt --wrap 'sleep 6; echo done')
wait_running "$kept"
lost=$(sbatch --parsable -w n078 --wrap 'sleep 60')
wait_running "$lost"
# A held job ended just before the agent dies: its node's hold waits KillWait for a step that
# ignores SIGTERM, and the restarted agent finishes it.
ending=$(sbatch --parsable -N2 -w n030,n170 -o /dev/null --wrap 'sleep 300')
wait_running "$ending"
srun --jobid="$ending" -N1 -w n170 --overlap bash -c "trap '' TERM; sleep 300" > /dev/null 2>&1 &
ending_step=$!
poll 100 has_step "$ending" || true
sleep 1  # the step's task is running on n170
scancel "$ending"
poll 50 test -e "$state/cluster/spool/n170/job_$ending/ending" || fail "n170 did not start ending job $ending"
sleep 2  # both launched more than BatchStartTimeout ago
command=$(tr '\0' '\n' < "/proc/$agent_pid/cmdline")
kill -9 "$agent_pid"
# The lost job's supervisor, processes and spool go with the "node": the restarted agent does
# not have it.
spool="$state/cluster/spool/n078/job_$lost"
[ -d "$spool" ] || fail "no spool directory $spool"
kill -9 "$(sed -n 's/^pid=//p' "$spool/supervisor.pid")" 2>/dev/null || true
rm -rf "$spool"
# The agent comes back at once: a sweep of /proc on a loaded machine can outlast SlurmdTimeout,
# and the node would go DOWN (its jobs requeued) before the agent could re-adopt anything.
mapfile -t argv <<< "$command"
setsid "${argv[@]}" >> "$state/cluster/logs/agent-1.log" 2>&1 < /dev/null &
new_pid=$!
# The lost job's other processes, which the restarted agent does not know of (no spool). This
# cluster's job only: other tests' clusters number their jobs from 1 too.
for proc in /proc/[0-9]*; do
  environment=$({ tr '\0' '\n' < "$proc/environ"; } 2>/dev/null || true)
  if grep -qx "SLURM_JOB_ID=$lost" <<< "$environment" &&
    grep -qx "SLURM_CONF=$DROVER_CONF" <<< "$environment"; then
    kill -9 "${proc#/proc/}" 2>/dev/null || true
  fi
done
requeued() { scontrol show job "$lost" | grep -q 'Restarts=1\b'; }
poll 100 requeued || fail "the lost job was not requeued: $(scontrol show job "$lost")"
scancel "$lost"
completed() { [ "$(sacct -n -X -j "$kept" -o State%20 | tr -d ' ')" = COMPLETED ]; }
poll 150 completed || fail "the re-adopted job: $(sacct -j "$kept")"
[ "$(cat kept.txt)" = done ] || fail "the re-adopted job's output: $(cat kept.txt)"
ending_spool_gone() { [ ! -e "$state/cluster/spool/n170/job_$ending" ]; }
cancelled() { sacct -n -X -j "$ending" -o State%20 | grep -q CANCELLED; }
poll 100 ending_spool_gone ||
  fail "the restarted agent did not finish the held job $ending: $(ls "$state/cluster/spool/n170/job_$ending")"
poll 100 cancelled || fail "the held job: $(sacct -j "$ending")"
kill "$ending_step" 2>/dev/null || true
wait "$ending_step" 2>/dev/null || true
kill "$new_pid"
wait "$new_pid" 2>/dev/null || true
new_pid=""

# ---- a listing of more than a page: 12,000 held tasks, each listed once, in order ----
array=$(sbatch --parsable --hold --array=0-11999 -o /dev/null --wrap true)
squeue -h -r -t PD -o %i > listed.txt
[ "$(wc -l < listed.txt)" = 12000 ] || fail "squeue -r listed $(wc -l < listed.txt) of 12000 tasks"
[ "$(sort -u listed.txt | wc -l)" = 12000 ] || fail "squeue -r listed a task twice"
[ "$(head -1 listed.txt) $(tail -1 listed.txt)" = "${array}_0 ${array}_11999" ] ||
  fail "squeue -r: first and last $(head -1 listed.txt) $(tail -1 listed.txt)"
[ "$(scontrol show job "$array" | grep -c '^JobId=')" = 12000 ] ||
  fail "scontrol show job $array showed $(scontrol show job "$array" | grep -c '^JobId=') tasks"
scontrol -o show job "${array}_11999" > task.txt
[ "$(wc -l < task.txt)" = 1 ] && grep -q "ArrayTaskId=11999 " task.txt ||
  fail "scontrol show job ${array}_11999: $(cat task.txt)"
[ "$(squeue -h -j "${array}_11998" -o %i)" = "${array}_11998" ] || fail "squeue -j ${array}_11998"
scancel "$array"
none_pending() { [ -z "$(squeue -h -r -t PD -o %i)" ]; }
poll 50 none_pending || fail "scancel $array left tasks pending: $(squeue -h -r -t PD | wc -l)"
echo "PASS"
