#!/bin/bash
# TreeWidth: a termination for several nodes goes down a tree of agents. With TreeWidth=1 the
# controller sends one Relay call for a 4-node job, to its first node's agent, which passes the
# other three on as one span to the next, and so on (a chain through four agent processes): the
# job's processes end on every node though the controller called only the first.
set -euo pipefail
drover="$1"
source "$(dirname "$0")/cluster.sh"

conf="$(mktemp -d "${DROVER_TEST_ROOT:-/tmp}/drover_relay_conf_XXXXXX")"
on_exit() { rm -rf "$conf"; cleanup_cluster; }
cat > "$conf/slurm.conf" <<'CONF'
ClusterName=relay
SlurmctldHost=localhost
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=100
TreeWidth=1
NodeName=r[1-4] NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000
PartitionName=p Nodes=ALL Default=YES MaxTime=10:00 State=UP
CONF
start_cluster relay --conf "$conf/slurm.conf"
trap on_exit EXIT
cd "$state/work"
[ "$(ls "$state/cluster/pids" | grep -cvx ctld)" = 4 ] || fail "expected four agent processes"
scontrol setdebugflags +Agent || fail "setdebugflags"  # the controller logs its agent calls

job=$(sbatch --parsable -N4 -o out.txt --wrap 'srun sleep 300')
# Every node runs one of the step's tasks.
# This cluster's job only: other tests' clusters number their jobs from 1 too.
job_processes() {
  for proc in /proc/[0-9]*; do
    environment=$({ tr '\0' '\n' < "$proc/environ"; } 2>/dev/null || true)
    if grep -qx "SLURM_JOB_ID=$job" <<< "$environment" &&
      grep -qx "SLURM_CONF=$DROVER_CONF" <<< "$environment"; then
      sed -n 's/^SLURMD_NODENAME=//p' <<< "$environment"
    fi
  done | sort -u | tr '\n' ' '
}
for _ in $(seq 100); do
  [ "$(job_processes)" = "r1 r2 r3 r4 " ] && break
  sleep 0.1
done
[ "$(job_processes)" = "r1 r2 r3 r4 " ] || fail "the job does not run on every node: $(job_processes)"
scancel "$job"
for _ in $(seq 100); do
  [ -z "$(job_processes)" ] && break
  sleep 0.1
done
[ -z "$(job_processes)" ] || fail "processes of job $job live on after its cancel: $(job_processes)"
log="$state/cluster/logs/ctld.log"
grep -q "Agent: relay for JobId=$job to .*: done" "$log" || fail "the controller sent no relay: $(grep "JobId=$job" "$log")"
# The controller called each node directly only to launch: the tree carried the rest.
[ "$(grep -c "Agent: call for JobId=$job to" "$log")" = 4 ] ||
  fail "direct calls besides the four launches: $(grep "JobId=$job" "$log")"
echo "PASS"
