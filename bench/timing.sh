# Timing helpers the bench scripts source: wall-clock stamps, rates and the median of five runs.
now() { date +%s.%N; }
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.0f", n / (b - a) }'; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
# The median of five runs of a command, in seconds. Stamped with bash's $EPOCHREALTIME, not
# $(now): each `date` is a process of its own, which added ~10 ms to every run measured.
median5() {
  local times=()
  for _ in 1 2 3 4 5; do
    local a b
    a=$EPOCHREALTIME
    "$@" >/dev/null
    b=$EPOCHREALTIME
    times+=("$(seconds "$a" "$b")")
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n 3p
}
# `bench_state NAME`: a new temporary state directory in $state for a `drover up` cluster (its
# XDG_STATE_HOME inside), stopped (drover down, by PID) and removed at exit. Needs $bin.
bench_state() {
  state="$(mktemp -d "/tmp/drover_$1_XXXXXX")"
  export XDG_STATE_HOME="$state/xdg"
  trap '"$bin/drover" down --state "$state/cluster" >/dev/null 2>&1 || true; rm -rf "$state"' EXIT
}
# `scale_conf DIR NAME NODES MAX_JOBS [LINE...]`: DIR/slurm.conf and DIR/topology.conf for a
# cluster NAME of NODES emulated nodes n00001... of 64 CPUs and 8 GPUs, 32 a leaf switch under
# one spine, partition "all" (the default) of every node; each LINE is added to slurm.conf.
scale_conf() {
  local dir=$1 cluster=$2 count=$3 max_jobs=$4
  shift 4
  local last leaves leaf first end
  last=$(printf 'n%05d' "$count")
  mkdir -p "$dir"
  {
    echo "ClusterName=$cluster"
    echo "SlurmctldHost=localhost"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_Core_Memory"
    echo "GresTypes=gpu"
    echo "DefMemPerCPU=1000"
    echo "MaxJobCount=$max_jobs"
    echo "TopologyPlugin=topology/tree"
    echo "NodeName=n[00001-${last#n}] NodeHostname=localhost NodeAddr=127.0.0.1 Sockets=2 CoresPerSocket=32 ThreadsPerCore=1 CPUs=64 RealMemory=512000 Gres=gpu:8"
    echo "PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
    printf '%s\n' "$@"
  } >"$dir/slurm.conf"
  leaves=$(((count + 31) / 32))
  for ((leaf = 1; leaf <= leaves; leaf++)); do
    first=$(((leaf - 1) * 32 + 1))
    end=$((leaf * 32 < count ? leaf * 32 : count))
    printf 'SwitchName=leaf%d Nodes=n[%05d-%05d]\n' "$leaf" "$first" "$end"
  done >"$dir/topology.conf"
  echo "SwitchName=spine Switches=leaf[1-$leaves]" >>"$dir/topology.conf"
}
