#!/bin/bash
# JobContainerType=job_container/tmpfs end to end on a local cluster (drover up, loopback, its
# own state; every process stopped at exit): a job's /tmp and /dev/shm are its own — what its
# batch script writes there its steps see, the host and other jobs do not — and they are gone
# when it ends. Needs root (mount namespaces): skipped otherwise.
set -euo pipefail
drover="$1"
source "$(dirname "$0")/cluster.sh"
skip_unless_root "for mount namespaces"
# The cluster's state, spool and work directory are outside /tmp, which the jobs do not see (a
# real node's SlurmdSpoolDir is not under /tmp either).
export DROVER_TEST_ROOT=/var/tmp
conf="$(mktemp -d /var/tmp/drover_container_conf_XXXXXX)"
cleanup_base() {
  while umount -l "$conf/base" 2>/dev/null; do :; done
  # Never remove through the bind mount of the build's bin directory.
  if mountpoint -q "$conf/bin"; then umount -l "$conf/bin" || return 0; fi
  rm -rf "$conf"
}
trap cleanup_base EXIT
# The commands, as the jobs run them (srun in the batch script), must be outside /tmp too: a
# build under /tmp (a CI clone) is reached through a bind mount of its bin directory.
mkdir "$conf/bin"
mount --bind "$(cd "$(dirname "$drover")" && pwd)" "$conf/bin"
drover="$conf/bin/$(basename "$drover")"
cat > "$conf/slurm.conf" <<CONF
ClusterName=container
SlurmctldHost=localhost
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=100
JobContainerType=job_container/tmpfs
NodeName=node[1-2] NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=2 RealMemory=2000
PartitionName=p Nodes=node[1-2] Default=YES MaxTime=10:00 State=UP
CONF
printf 'AutoBasePath=true\nBasePath=%s/base\n' "$conf" > "$conf/job_container.conf"
start_cluster container --conf "$conf/slurm.conf"
trap 'cleanup_cluster; cleanup_base' EXIT
cd "$state/work"
on_fail() {
  for f in job.out other.out; do echo "--- $f"; cat "$f" 2>/dev/null || true; done
  cat "$state"/cluster/spool/*/job_*/stepd.log 2>/dev/null | tail -20 || true
}

wait_end() {
  for _ in $(seq 1 300); do
    case "$(sacct -X -n -P -j "$1" -o State)" in PENDING | RUNNING | "") sleep 0.1 ;; *) break ;; esac
  done
  [ "$(sacct -X -n -P -j "$1" -o State)" = COMPLETED ] || fail "job $1: $(sacct -j "$1")"
}

marker="drover_container_$$"
job=$(sbatch --parsable -N2 -o job.out --wrap "
echo secret > /tmp/$marker
echo shm > /dev/shm/$marker
srun -N2 -n2 -l cat /tmp/$marker
ls /tmp | grep -c . ; ls /dev/shm
sleep 2")
other=$(sbatch --parsable -o other.out --wrap "ls /tmp/$marker 2>&1 || true")
wait_end "$job"
wait_end "$other"
[ ! -e "/tmp/$marker" ] || fail "the job's /tmp file is on the host"
[ ! -e "/dev/shm/$marker" ] || fail "the job's /dev/shm file is on the host"
# The batch script's /tmp (node1) held only its file; its step's task on node1 saw it, the one
# on node2 (another node: its own private /tmp) did not.
grep -q "^0: secret$" job.out || fail "the step on the batch node did not see /tmp: $(cat job.out)"
grep -q "^1: cat: /tmp/$marker: No such file or directory$" job.out ||
  fail "node2's task saw node1's /tmp: $(cat job.out)"
grep -qx "1" job.out || fail "the job's /tmp was not empty at its start: $(cat job.out)"
grep -qx "$marker" job.out || fail "/dev/shm: $(cat job.out)"
grep -q "No such file or directory" other.out || fail "another job saw the file: $(cat other.out)"
# Gone with the job, on both nodes.
left() { find "$conf/base" -mindepth 2; }
for _ in $(seq 1 50); do
  [ -z "$(left)" ] && break
  sleep 0.1
done
[ -z "$(left)" ] || fail "left behind: $(left)"
echo PASS
