#!/bin/bash
# Step launch and PMI on an emulated cluster of two nodes of 64 CPUs (this build's daemons,
# loopback, temporary state): the time of `srun -N2 -n64 true` inside an allocation (median
# and slowest of RUNS), the same with --mpi=pmix (the agents register a PMIx namespace), and the
# PMIx fence of 64 ranks (bench/pmix_fence.c: the slowest rank's second and third fence, median
# and slowest over RUNS).
#   bench/steps.sh [BUILD_BIN] [RUNS]
set -euo pipefail
bin="$(cd "${1:-build/bin}" && pwd)"
runs="${2:-10}"
here="$(cd "$(dirname "$0")" && pwd)"
work=$(mktemp -d /tmp/drover_steps.XXXXXX)
cleanup() {
  "$bin/drover" down --state "$work/cluster" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
sed -e 's/^NodeName=node\[1-4\].*/NodeName=node[1-2] NodeHostname=localhost NodeAddr=127.0.0.1 Sockets=2 CoresPerSocket=32 ThreadsPerCore=1 CPUs=64 RealMemory=256000 State=UNKNOWN/' \
  -e 's/Nodes=node\[1-4\]/Nodes=node[1-2]/' -e '/^GresTypes/d' -e '/^TopologyPlugin/d' "$here/../examples/demo/slurm.conf" >"$work/slurm.conf"
"$bin/drover" up --state "$work/cluster" --conf "$work/slurm.conf" >"$work/up.txt"
export DROVER_CONF="$work/cluster/slurm.conf" PATH="$bin:$PATH"
cc -O2 -o "$work/pmix_fence" "$here/pmix_fence.c" $(pkg-config --cflags --libs pmix)
cat >"$work/inside.sh" <<SCRIPT
#!/bin/bash
time_it() {  # microseconds
  local start end
  start=\$(date +%s%N)
  "\$@" >/dev/null
  end=\$(date +%s%N)
  echo \$(( (end - start) / 1000 ))
}
srun -n64 true  # the first step warms the agents' caches
for i in \$(seq $runs); do echo "plain \$(time_it srun -n64 true)"; done
for i in \$(seq $runs); do echo "pmix \$(time_it srun --mpi=pmix -n64 true)"; done
for i in \$(seq $runs); do
  srun --mpi=pmix -n64 $work/pmix_fence |
    awk '{ if (\$3 > a) a = \$3; if (\$4 > b) b = \$4; n++ } END { if (n == 64) { print "fence2", a; print "fence3", b } }'
done
SCRIPT
salloc -Q -N2 -n64 bash "$work/inside.sh" >"$work/out.txt"
summary() {  # label, column of the lines named $1, its scale to ms: median and slowest
  local values
  mapfile -t values < <(awk -v name="$1" -v col="$2" -v scale="$3" \
    '$1 == name { printf "%.3f\n", $col * scale }' "$work/out.txt" | sort -n)
  local count=${#values[@]}
  printf "%-34s median %8.1f ms   slowest %8.1f ms   (%d runs)\n" "$1" \
    "${values[$(((count - 1) / 2))]}" "${values[$((count - 1))]}" "$count"
}
echo "machine: $(nproc) CPUs, $(uname -r)"
summary plain 2 0.001 | sed 's/^plain */srun -N2 -n64 true             /'
summary pmix 2 0.001 | sed 's/^pmix */srun --mpi=pmix -N2 -n64 true   /'
summary fence2 2 1 | sed 's/^fence2 */PMIx fence of 64 ranks (2nd)   /'
summary fence3 2 1 | sed 's/^fence3 */PMIx fence of 64 ranks (3rd)   /'
