#!/bin/bash
# srun as an MPI launcher on two emulated nodes, with Debian's Open MPI (PMIx, the agents'
# OpenPMIx server), mpi4py, MPICH (the PMI-1 wire protocol of --mpi=pmi2) and a PMI-2 client on
# the wire: four ranks of one world whose Allreduce of the ranks is 6; a rank that dies ends the
# step with -K, and MPI_Abort ends it on every node.
set -euo pipefail
drover="$1"
root_dir="$2"
here="$(cd "$(dirname "$0")" && pwd)"
source "$root_dir/tests/cli/cluster.sh"
for program in mpicc.openmpi mpicc.mpich; do
  command -v "$program" >/dev/null || { echo "FAIL: $program is missing: run scripts/setup --tests" >&2; exit 1; }
done
/usr/bin/python3 -c "import mpi4py" 2>/dev/null || { echo "FAIL: python3-mpi4py is missing: run scripts/setup --tests" >&2; exit 1; }
start_cluster mpi --conf "$root_dir/examples/demo/slurm.conf"
cd "$state/work"
mpicc.openmpi -o allreduce_ompi "$here/allreduce.c"
mpicc.mpich -o allreduce_mpich "$here/allreduce.c"
# Two emulated nodes are one host: Open MPI's shared-memory transport would mistake one node's
# ranks for the other's (its segments are named by host), and its TCP transport skips loopback
# unless told. On real nodes neither is needed.
export OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_pml=ob1
# Open MPI's session directories (jf.*) go under the test's own state, not /tmp.
export TMPDIR="$state/tmp"
mkdir -p "$TMPDIR"

# One world of four ranks on two nodes, whose Allreduce of the ranks is 6.
check_world() {
  local what="$1" output="$2"
  local expected="rank 0 of 4 on node1: sum 6
rank 1 of 4 on node1: sum 6
rank 2 of 4 on node2: sum 6
rank 3 of 4 on node2: sum 6"
  [ "$(grep '^rank' <<<"$output" | sort)" = "$expected" ] || fail "$what: $output"
}
out=$(timeout 60 salloc -N2 -n4 srun --mpi=pmix ./allreduce_ompi 2>&1) || fail "Open MPI over PMIx: $out"
check_world "Open MPI over PMIx" "$out"
out=$(timeout 60 salloc -N2 -n4 srun --mpi=pmix /usr/bin/python3 "$here/allreduce.py" 2>&1) ||
  fail "mpi4py over PMIx: $out"
check_world "mpi4py over PMIx" "$out"
out=$(timeout 60 salloc -N2 -n4 srun --mpi=pmi2 ./allreduce_mpich 2>&1) || fail "MPICH over PMI: $out"
check_world "MPICH over --mpi=pmi2" "$out"
# SLURM_MPI_TYPE is --mpi's variable.
out=$(SLURM_MPI_TYPE=pmi2 timeout 60 salloc -N2 -n4 srun ./allreduce_mpich 2>&1) ||
  fail "MPICH with SLURM_MPI_TYPE=pmi2: $out"
check_world "MPICH with SLURM_MPI_TYPE=pmi2" "$out"

# A megabyte on srun's stdin that task 0 reads only after MPI_Init: the fences behind it on the
# step's stream are not held up.
head -c 1048576 /dev/zero >stdin.bin
out=$(timeout 60 salloc -N2 -n4 srun --mpi=pmix /usr/bin/python3 "$here/allreduce.py" stdin <stdin.bin 2>&1) ||
  fail "stdin behind the fences: $out"
grep -q "^rank 0 read 1048576 bytes of stdin$" <<<"$out" || fail "stdin behind the fences: $out"

# The PMI-2 wire protocol: every rank reads the next one's key after the fence.
out=$(timeout 60 salloc -N2 -n4 srun --mpi=pmi2 /usr/bin/python3 "$here/pmi2_client.py" 2>&1) ||
  fail "PMI-2 client: $out"
expected="rank 0 of 4: rank 1 is on node1; mapping (vector,(0,2,2))
rank 1 of 4: rank 2 is on node2; mapping (vector,(0,2,2))
rank 2 of 4: rank 3 is on node2; mapping (vector,(0,2,2))
rank 3 of 4: rank 0 is on node1; mapping (vector,(0,2,2))"
[ "$(grep '^rank' <<<"$out" | sort)" = "$expected" ] || fail "PMI-2 client: $out"

# A rank that dies: with -K the others are killed, and srun exits with its code as Slurm's does.
set +e
out=$(timeout 60 salloc -N2 -n4 srun -K --mpi=pmix /usr/bin/python3 "$here/allreduce.py" fail 2>&1)
code=$?
set -e
[ "$code" = 3 ] || fail "-K: exit code $code: $out"
grep -q "srun: error: node2: task 3: Exited with exit code 3" <<<"$out" || fail "-K: $out"
grep -q "srun: Terminating StepId=" <<<"$out" || fail "-K, no Terminating: $out"
# MPI_Abort from one rank ends the step on both nodes.
set +e
out=$(timeout 60 salloc -N2 -n4 srun --mpi=pmix /usr/bin/python3 "$here/allreduce.py" abort 2>&1)
code=$?
set -e
[ "$code" != 0 ] && [ "$code" != 124 ] || fail "MPI_Abort: exit code $code: $out"
grep -q "^srun: error: node[12]: PMIx_Abort with status 5" <<<"$out" || fail "MPI_Abort's PMIx abort: $out"
grep -q "^srun: error: node2: task [23]: Killed" <<<"$out" || fail "MPI_Abort left node2's ranks: $out"

# Types Drover does not serve are refused, not ignored.
srun --mpi=cray_shasta true 2>"$state/err.txt" && fail "--mpi=cray_shasta ran"
grep -q "cray_shasta" "$state/err.txt" || fail "cray_shasta: $(cat "$state/err.txt")"
echo PASS
