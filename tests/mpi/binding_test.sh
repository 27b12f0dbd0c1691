#!/bin/bash
# Rank binding as Slurm's task/affinity does it, read back by each task with sched_getaffinity:
# --cpu-bind=threads|cores|map_cpu|mask_cpu|none, -m block:block and block:cyclic (the default),
# -c, --ntasks-per-socket and --hint=nomultithread on a node of 2 sockets x 2 cores x 2 threads,
# and SLURM_CPU_BIND_TYPE. Slurm numbers a node's CPUs socket, core, thread (CPU 5 is socket 1,
# core 0, thread 1); an emulated node's CPU c runs on this host's (c mod N)-th usable CPU, so the
# expected sets are mapped so before they are compared.
set -euo pipefail
drover="$1"
root_dir="$2"
source "$root_dir/tests/cli/cluster.sh"
conf=$(mktemp)
sed -e 's/^NodeName=node\[1-4\].*/NodeName=node[1-2] NodeHostname=localhost NodeAddr=127.0.0.1 Sockets=2 CoresPerSocket=2 ThreadsPerCore=2 CPUs=8 RealMemory=16000 State=UNKNOWN/' \
  -e 's/Nodes=node\[1-4\]/Nodes=node[1-2]/' -e '/^GresTypes/d' -e '/^TopologyPlugin/d' \
  "$root_dir/examples/demo/slurm.conf" >"$conf"
echo "TaskPlugin=task/affinity" >>"$conf"
start_cluster binding --conf "$conf"
rm -f "$conf"
cd "$state/work"
# The host CPUs an emulated CPU runs on.
host_of() {
  /usr/bin/python3 - "$1" <<'PY'
import os, sys
usable = sorted(os.sched_getaffinity(0))
cpus = sorted({usable[int(c) % len(usable)] for c in sys.argv[1].split(",")})
print(",".join(map(str, cpus)))
PY
}
# Each task: its rank, its CPUs (sched_getaffinity) and SLURM_CPU_BIND_TYPE.
cat >report.py <<'PY'
import os
cpus = ",".join(map(str, sorted(os.sched_getaffinity(0))))
# One write per line: the two tasks' lines reach srun whole.
os.write(1, f"{os.environ['SLURM_PROCID']} {cpus} {os.environ.get('SLURM_CPU_BIND_TYPE', '-')}\n".encode())
PY
check() {  # description, expected abstract CPUs of task 0 and 1, bind type, srun options...
  local what="$1" want0="$2" want1="$3" type="$4"
  shift 4
  local out
  out=$(salloc -Q -N1 --exclusive srun -n2 "$@" /usr/bin/python3 report.py 2>&1 | sort) ||
    fail "$what: $out"
  local expected="0 $(host_of "$want0") $type
1 $(host_of "$want1") $type"
  [ "$out" = "$expected" ] || fail "$what: got
$out
expected
$expected"
}
check "threads, block:cyclic (the default)" 0 4 "threads" --cpu-bind=threads
check "threads, block:block" 0 1 "threads" --cpu-bind=threads -m block:block
check "cores, block:cyclic" 0,1 4,5 "cores" --cpu-bind=cores -m block:cyclic
check "cores, block:block" 0,1 2,3 "cores" --cpu-bind=cores -m block:block
check "map_cpu" 3 6 "map_cpu:" --cpu-bind=map_cpu:3,6
check "mask_cpu" 4,5 0,1 "mask_cpu:" --cpu-bind=mask_cpu:0x30,0x3
check "none" 0,1,2,3,4,5,6,7 0,1,2,3,4,5,6,7 "none" --cpu-bind=none
check "-c 2, threads, block:block" 0,1 2,3 "threads" -c 2 --cpu-bind=threads -m block:block
check "--ntasks-per-socket=1, cores" 0,1 4,5 "cores" --ntasks-per-socket=1 --cpu-bind=cores -m block:block
check "--hint=nomultithread" 0 2 "threads" --hint=nomultithread -m block:block
echo PASS
