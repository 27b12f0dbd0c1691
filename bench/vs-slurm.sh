#!/bin/bash
# Drover and Slurm side by side, on this machine, in one run: the same four-node emulated cluster
# (one slurm.conf: 4 nodes of 16 CPUs on loopback) as Slurm 22.05's daemons (Debian's slurmctld
# and slurmd, one slurmd a node, authenticated by a munged of the run's own) and as `drover up`,
# the same workload against each, one after the other, then each figure with the ratio.
#
#   bench/vs-slurm.sh [--install] [BIN_DIR]    (default build/bin; root: slurmd runs the jobs)
#
# --install installs Debian's slurmctld, slurmd, slurm-client and munge with apt-get first (the
# packages' own services are not started). Everything else lives in a temporary directory:
# ports chosen now, processes stopped by PID at the end.
#
# The workload, with the commands as a user runs them (one process per command):
#   - submit -> start: one job at a time on the idle cluster, from sbatch's start to the time
#     its script's first line writes (median of LATENCY=10);
#   - sbatch of `true` jobs while 32 `sleep` jobs hold half of the CPUs: SEQUENTIAL=200 one
#     after another, then as many from 8 submitters;
#   - DRAIN=1000 `true` jobs (one array) from submission to the last one's end;
#   - HELD=20000 held jobs from 8 submitters (jobs/s), then squeue, scontrol show job (all and
#     one) at that queue (medians of 5), the controller's RSS, and scancel of all of them.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
install=no
if [ "${1:-}" = --install ]; then
  install=yes
  shift
fi
bin="$(cd "${1:-$root/build/bin}" && pwd)"
latency_runs=${LATENCY:-10}
sequential=${SEQUENTIAL:-200}
drain=${DRAIN:-1000}
held=${HELD:-20000}
submitters=8

if [ "$(id -u)" != 0 ]; then
  echo "vs-slurm.sh: run it as root (slurmd starts every job as its user)" >&2
  exit 2
fi
if [ "$install" = yes ]; then
  # Installed, not started: policy-rc.d refuses the packages' service starts meanwhile.
  created_policy=no
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    created_policy=yes
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurmctld slurmd slurm-client munge >/dev/null
  [ "$created_policy" = yes ] && rm -f /usr/sbin/policy-rc.d
fi
for program in /usr/sbin/slurmctld /usr/sbin/slurmd /usr/bin/sbatch /usr/sbin/munged; do
  if [ ! -x "$program" ]; then
    echo "vs-slurm.sh: $program is missing; run with --install (Debian's slurm-wlm and munge)" >&2
    exit 2
  fi
done

dir="$(mktemp -d /tmp/drover_vs_slurm_XXXXXX)"
chmod 755 "$dir"
pids=()
cleanup() {
  "$bin/drover" down --state "$dir/drover" >/dev/null 2>&1 || true
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  rm -rf "$dir"
}
trap cleanup EXIT
# shellcheck source=bench/timing.sh
source "$root/bench/timing.sh"

# Five TCP ports nobody listens on now (from /proc/net/tcp's listening sockets), all different:
# the controller's and one a slurmd.
ports=()
while ((${#ports[@]} < 5)); do
  port=$((20000 + RANDOM % 30000))
  [[ " ${ports[*]} " == *" $port "* ]] && continue
  if ! awk -v p="$(printf '%04X' "$port")" '$4 == "0A" && $2 ~ ":" p "$" { found = 1 } END { exit !found }' \
    /proc/net/tcp /proc/net/tcp6; then
    ports+=("$port")
  fi
done

# The cluster both run: 4 nodes of 2 x 8 cores on loopback, cons_tres, backfill.
ctld_port=${ports[0]}
mkdir -p "$dir/slurm/state" "$dir/slurm/spool" "$dir/munge" "$dir/drover-conf" "$dir/out"
{
  echo "ClusterName=vs"
  echo "SlurmctldHost=localhost(127.0.0.1)"
  echo "SlurmctldPort=$ctld_port"
  echo "SlurmUser=root"
  echo "SlurmdUser=root"
  echo "AuthType=auth/munge"
  echo "AuthInfo=socket=$dir/munge/munge.socket"
  echo "CredType=cred/munge"
  echo "StateSaveLocation=$dir/slurm/state"
  echo "SlurmdSpoolDir=$dir/slurm/spool/%n"
  echo "SlurmctldPidFile=$dir/slurm/slurmctld.pid"
  echo "SlurmdPidFile=$dir/slurm/slurmd.%n.pid"
  echo "SlurmctldLogFile=$dir/slurm/slurmctld.log"
  echo "SlurmdLogFile=$dir/slurm/slurmd.%n.log"
  echo "ProctrackType=proctrack/linuxproc"
  echo "TaskPlugin=task/none"
  echo "JobAcctGatherType=jobacct_gather/none"
  echo "AccountingStorageType=accounting_storage/none"
  echo "JobCompType=jobcomp/none"
  echo "MpiDefault=none"
  echo "ReturnToService=2"
  # The nodes are emulated: each has the CPUs and memory this file gives it, not the host's.
  echo "SlurmdParameters=config_overrides"
  echo "SelectType=select/cons_tres"
  echo "SelectTypeParameters=CR_Core_Memory"
  echo "DefMemPerCPU=1000"
  echo "SchedulerType=sched/backfill"
  echo "MaxJobCount=$((held + drain + 1000))"
  echo "MaxArraySize=$((drain + 1))"
  for n in 1 2 3 4; do
    echo "NodeName=node$n NodeHostname=localhost NodeAddr=127.0.0.1 Port=${ports[n]} Sockets=2 CoresPerSocket=8 ThreadsPerCore=1 CPUs=16 RealMemory=64000 State=UNKNOWN"
  done
  echo "PartitionName=debug Nodes=node[1-4] Default=YES MaxTime=INFINITE State=UP"
} >"$dir/slurm/slurm.conf"
cp "$dir/slurm/slurm.conf" "$dir/drover-conf/slurm.conf"

# MUNGE for Slurm: a key and a munged of this run's own.
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 600 "$dir/munge/munge.key"
/usr/sbin/munged --foreground --force --key-file="$dir/munge/munge.key" \
  --socket="$dir/munge/munge.socket" --pid-file="$dir/munge/munged.pid" \
  --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed" &
pids+=($!)
for _ in $(seq 100); do [ -S "$dir/munge/munge.socket" ] && break; sleep 0.1; done

# Each system's commands and their controller's PID.
S=/usr/bin
D="$bin"
rss() { awk '/^VmRSS/ { printf "%.0f", $2 / 1024 }' "/proc/$1/status"; }

# The workload against one system: $1 its name, $2 the folder of its commands, $3 a command
# that prints its controller's PID. Figures go to $dir/figures.$1 as NAME=VALUE lines.
workload() {
  local name=$1 cmd=$2 ctld_pid=$3 out="$dir/figures.$1"
  : >"$out"
  local work="$dir/work.$name"
  mkdir -p "$work"
  cd "$work"
  # submit -> start, idle.
  local latencies=()
  for ((i = 0; i < latency_runs; i++)); do
    local a
    a=$(now)
    "$cmd/sbatch" -Q -o /dev/null --wrap="date +%s.%N > $work/start.$i" >/dev/null
    until [ -s "$work/start.$i" ]; do sleep 0.005; done
    latencies+=("$(seconds "$a" "$(cat "$work/start.$i")")")
  done
  echo "latency=$(printf '%s\n' "${latencies[@]}" | sort -n | sed -n "$(((latency_runs + 1) / 2))p")" >>"$out"
  # A step of 32 tasks on two nodes inside an allocation: the median of 5, after one that warms
  # the nodes up.
  local steps
  steps=$("$cmd/salloc" -Q -N2 -n32 bash -c "$cmd/srun -n32 true
    for i in 1 2 3 4 5; do
      a=\$(date +%s.%N); $cmd/srun -n32 true; b=\$(date +%s.%N)
      awk -v a=\$a -v b=\$b 'BEGIN { printf \"%.4f\\n\", b - a }'
    done" 2>/dev/null | sort -n | sed -n 3p)
  echo "step=${steps:-0}" >>"$out"
  # Half of the CPUs busy, then sbatch of short jobs, one after another and from 8 submitters.
  "$cmd/sbatch" -Q -o /dev/null -a 0-31 --wrap="sleep 3600" >/dev/null
  local a b per=$((sequential / submitters))
  a=$(now)
  for ((i = 0; i < sequential; i++)); do "$cmd/sbatch" -Q -o /dev/null --wrap=true >/dev/null; done
  b=$(now)
  echo "sequential=$(rate "$sequential" "$a" "$b")" >>"$out"
  a=$(now)
  local group=()
  for ((s = 0; s < submitters; s++)); do
    (for ((i = 0; i < per; i++)); do "$cmd/sbatch" -Q -o /dev/null --wrap=true >/dev/null; done) &
    group+=($!)
  done
  wait "${group[@]}"
  b=$(now)
  echo "parallel=$(rate $((per * submitters)) "$a" "$b")" >>"$out"
  "$cmd/scancel" -u root
  until [ -z "$("$cmd/squeue" -h -o %i)" ]; do sleep 0.2; done
  # A drain of `true` jobs.
  a=$(now)
  "$cmd/sbatch" -Q -o /dev/null -a "0-$((drain - 1))" --wrap=true >/dev/null
  until [ -z "$("$cmd/squeue" -h -o %i)" ]; do sleep 0.1; done
  b=$(now)
  echo "drain=$(rate "$drain" "$a" "$b")" >>"$out"
  # Held jobs from 8 submitters, then the queries at that queue.
  per=$((held / submitters))
  a=$(now)
  group=()
  for ((s = 0; s < submitters; s++)); do
    (for ((i = 0; i < per; i++)); do "$cmd/sbatch" -H -Q -o /dev/null --wrap=true >/dev/null; done) &
    group+=($!)
  done
  wait "${group[@]}"
  b=$(now)
  echo "held=$(rate $((per * submitters)) "$a" "$b")" >>"$out"
  local one
  one=$("$cmd/squeue" -h -o %i | tail -1)
  echo "squeue=$(median5 "$cmd/squeue")" >>"$out"
  echo "show_all=$(median5 "$cmd/scontrol" show job)" >>"$out"
  echo "show_one=$(median5 "$cmd/scontrol" show job "$one")" >>"$out"
  echo "rss=$(rss "$($ctld_pid)")" >>"$out"
  a=$(now)
  "$cmd/scancel" -u root
  b=$(now)
  echo "scancel=$(seconds "$a" "$b")" >>"$out"
  until [ -z "$("$cmd/squeue" -h -o %i)" ]; do sleep 0.5; done
  cd "$dir"
}

echo "$(date -u +%Y-%m-%d), $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo);" \
  "/bin/true from a shell: $(a=$(now); for _ in $(seq 100); do /bin/true; done; b=$(now); awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f ms", (b - a) * 10 }')"

# Slurm.
export SLURM_CONF="$dir/slurm/slurm.conf"
/usr/sbin/slurmctld -D -i -f "$SLURM_CONF" >"$dir/slurm/slurmctld.out" 2>&1 &
slurmctld=$!
pids+=("$slurmctld")
for n in 1 2 3 4; do
  mkdir -p "$dir/slurm/spool/node$n"
  /usr/sbin/slurmd -D -f "$SLURM_CONF" -N "node$n" >"$dir/slurm/slurmd.node$n.out" 2>&1 &
  pids+=($!)
done
for _ in $(seq 300); do
  [ "$("$S/sinfo" -h -t idle -o %D 2>/dev/null)" = 4 ] && break
  sleep 0.2
done
if [ "$("$S/sinfo" -h -t idle -o %D 2>/dev/null)" != 4 ]; then
  echo "vs-slurm.sh: Slurm's four nodes did not come up idle; its logs:" >&2
  tail -n 20 "$dir"/slurm/*.log "$dir"/slurm/*.out >&2 || true
  exit 1
fi
echo "Slurm $("$S/sinfo" -V | awk '{ print $2 }'): $("$S/sinfo" -h -o '%D nodes, %C CPUs (A/I/O/T)')"
workload slurm "$S" "echo $slurmctld"
unset SLURM_CONF
kill "$slurmctld" 2>/dev/null || true

# Drover, on the same slurm.conf.
"$bin/drover" up --conf "$dir/drover-conf/slurm.conf" --state "$dir/drover" >"$dir/drover-up.txt"
export DROVER_CONF="$dir/drover/slurm.conf"
echo "Drover: $(head -1 "$dir/drover-up.txt")"
workload drover "$D" "sed -n s/^pid=//p $dir/drover/pids/ctld"
"$bin/drover" down --state "$dir/drover" >/dev/null

# The table: each figure, the ratio in Drover's favour (Slurm's time / Drover's, Drover's rate /
# Slurm's; RSS as Slurm's / Drover's).
get() { sed -n "s/^$2=//p" "$dir/figures.$1"; }
row() {  # label key kind(time|rate|mib)
  local s d
  s=$(get slurm "$2")
  d=$(get drover "$2")
  case $3 in
    time) awk -v l="$1" -v s="$s" -v d="$d" 'BEGIN { printf "| %s | %.3f s | %.3f s | %.1f× |\n", l, s, d, s / d }' ;;
    rate) awk -v l="$1" -v s="$s" -v d="$d" 'BEGIN { printf "| %s | %d/s | %d/s | %.1f× |\n", l, s, d, d / s }' ;;
    mib) awk -v l="$1" -v s="$s" -v d="$d" 'BEGIN { printf "| %s | %d MiB | %d MiB | %.1f× less |\n", l, s, d, s / d }' ;;
  esac
}
echo
echo "| figure | Slurm 22.05 | Drover | ratio |"
echo "|---|---|---|---|"
row "submit → start, idle (median of $latency_runs)" latency time
row "\`srun -N2 -n32 true\` in an allocation (median of 5)" step time
row "\`sbatch\` one after another, jobs running" sequential rate
row "\`sbatch\` from $submitters submitters, jobs running" parallel rate
row "$drain \`true\` jobs drained" drain rate
row "$held held jobs from $submitters submitters" held rate
row "\`squeue\` at $held pending" squeue time
row "\`scontrol show job\` (all) at $held" show_all time
row "\`scontrol show job <id>\` at $held" show_one time
row "\`scancel\` of $held pending" scancel time
row "controller RSS at $held pending" rss mib
