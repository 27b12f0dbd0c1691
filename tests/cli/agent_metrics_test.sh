#!/bin/bash
# Each droverd's /metrics (node_metrics.h) on a `drover up` cluster whose GPUs are the fake NVML
# library's: the GPUs' readings as NVML gives them, each GPU's allocation, the XID the health
# probe saw, a running job's GPUs and their use attributed to it, its cgroup's CPU time and
# memory (as root, where jobs get cgroups), the node's partitions, bounded labels (a job's name
# never becomes a label) and Prometheus' own check of the text (promtool check metrics).
# Usage: agent_metrics_test.sh DROVER FAKE_NVML_LIBRARY
set -euo pipefail
drover="$1"
fake_nvml="$2"
source "$(dirname "$0")/cluster.sh"
conf="$(mktemp -d /tmp/drover_agent_metrics_XXXXXX)"
trap 'rm -rf "$conf"' EXIT
cat >"$conf/slurm.conf" <<CONF
ClusterName=metrics
SlurmctldHost=localhost
GresTypes=gpu
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=100
HealthCheckInterval=1
NodeName=node[1-2] NodeHostname=localhost NodeAddr=127.0.0.1 Sockets=2 CoresPerSocket=2 RealMemory=4000 Gres=gpu:h100:2
PartitionName=p Nodes=node[1-2] Default=YES MaxTime=10:00 State=UP
PartitionName=q Nodes=node1 MaxTime=10:00 State=UP
CONF
echo "AutoDetect=nvml" >"$conf/gres.conf"
cat >"$conf/nvml.conf" <<'NVML'
node node1
gpu name="NVIDIA H100 80GB HBM3" uuid=GPU-node1-a minor=0 bus=0x18 cpus=0-1 util=87 mem_util=40 used=20480 power=312 temp=55 xid=13
gpu name="NVIDIA H100 80GB HBM3" uuid=GPU-node1-b minor=1 bus=0x2a cpus=2-3 util=5 used=512 power=80 temp=41
node node2
gpu name="NVIDIA H100 80GB HBM3" uuid=GPU-node2-a minor=0 bus=0x18 cpus=0-1
gpu name="NVIDIA H100 80GB HBM3" uuid=GPU-node2-b minor=1 bus=0x2a cpus=2-3
NVML
export FAKE_NVML_CONFIG="$conf/nvml.conf"
start_cluster agent_metrics --conf "$conf/slurm.conf" --nvml "$fake_nvml"
trap 'cleanup_cluster; rm -rf "$conf"' EXIT
cd "$state/work"

port_file="$state/cluster/metrics/node1.port"
[ -s "$port_file" ] || fail "drover up wrote no /metrics port for node1 ($(ls "$state/cluster/metrics"))"
url="http://127.0.0.1:$(cat "$port_file")/metrics"
# A job on node1's GPU 0 (sorted first), named to try to break a label, holding some memory.
job=$(sbatch --parsable -w node1 --gpus=1 -J 'bad"name}{x=1' -o /dev/null \
  --wrap "python3 -c 'x = b\"x\" * (40 << 20); import time; time.sleep(120)'")
poll 300 sh -c "squeue -h -j $job -o %T | grep -qx RUNNING" || fail "job $job did not start"
# value METRIC LABELS: the sample's value ("" when absent).
value() { awk -v key="$1{$2} " 'index($0, key) == 1 { print $NF }' "$state/metrics.txt"; }
scrape() { curl -sf "$url" >"$state/metrics.txt"; }
ready() { scrape && grep -q "^drover_job_gpus{node=\"node1\",job_id=\"$job\"" "$state/metrics.txt" &&
  [ "$(value drover_node_gpu_xid_errors_total 'node="node1",gpu="0"')" = 1 ]; }
poll 100 ready || fail "the job or the XID is not in /metrics: $(grep -E 'drover_job_gpus|xid' "$state/metrics.txt")"

expect() {  # expect METRIC LABELS VALUE
  local got
  got=$(value "$1" "$2")
  [ "$got" = "$3" ] || fail "$1{$2} is '$got', not $3"
}
expect drover_node_gpu_utilization_ratio 'node="node1",gpu="0"' 0.87
expect drover_node_gpu_memory_utilization_ratio 'node="node1",gpu="0"' 0.4
expect drover_node_gpu_memory_used_bytes 'node="node1",gpu="0"' 21474836480
expect drover_node_gpu_memory_total_bytes 'node="node1",gpu="0"' 85520809984
expect drover_node_gpu_temperature_celsius 'node="node1",gpu="0"' 55
expect drover_node_gpu_power_watts 'node="node1",gpu="0"' 312
expect drover_node_gpu_power_watts 'node="node1",gpu="1"' 80
expect drover_node_gpu_ecc_uncorrected_errors_total 'node="node1",gpu="0"' 0
expect drover_node_gpu_last_xid 'node="node1",gpu="0"' 13
expect drover_node_gpu_lost 'node="node1",gpu="1"' 0
expect drover_node_gpu_info 'node="node1",gpu="0",uuid="GPU-node1-a",model="NVIDIA H100 80GB HBM3"' 1
expect drover_node_gpu_allocated 'node="node1",gpu="0"' 1
expect drover_node_gpu_allocated 'node="node1",gpu="1"' 0
expect drover_node_gpus 'node="node1"' 2
expect drover_node_cpus 'node="node1"' 4
expect drover_node_jobs 'node="node1"' 1
expect drover_node_partition 'node="node1",partition="p"' 1
expect drover_node_partition 'node="node1",partition="q"' 1
# The job's account label: its account where accounting knows it, else "other".
account=$(squeue -h -j "$job" -o %a)
sacctmgr -n -P show account format=Account | grep -qx "$account" || account=other
job_labels="node=\"node1\",job_id=\"$job\",user=\"$(id -un)\",account=\"$account\""
expect drover_job_gpus "$job_labels" 1
expect drover_job_gpu_utilization_ratio "$job_labels" 0.87
expect drover_job_gpu_memory_used_bytes "$job_labels" 21474836480
[ -n "$(value drover_node_memory_total_bytes 'node="node1"')" ] || fail "no node memory"
[ -n "$(value drover_node_cpu_seconds_total 'node="node1",mode="idle"')" ] || fail "no node CPU time"
if [ "$(id -u)" = 0 ]; then
  holds() {  # the job's python has made its 40 MiB (it may still be starting)
    scrape && memory=$(value drover_job_memory_bytes "$job_labels") && [ -n "$memory" ] &&
      awk -v m="$memory" 'BEGIN { exit !(m > 40 * 1048576) }'
  }
  poll 150 holds || fail "job $job's cgroup memory is '${memory:-}', less than the 40 MiB it holds"
  [ -n "$(value drover_job_cpu_seconds_total "$job_labels")" ] || fail "no cgroup CPU time for the job"
else
  echo "note: not root: the job has no cgroup; its CPU and memory are not checked"
fi
# Bounded labels: the job's name is nowhere; only these label names appear.
grep -q 'bad' "$state/metrics.txt" && fail "a job's name got into /metrics"
labels=$(grep -v '^#' "$state/metrics.txt" | grep -o '[a-z_]*="' | sort -u | tr -d '="' | tr '\n' ' ')
[ "$labels" = "account gpu job_id mode model node partition user uuid " ] || fail "label names: $labels"
promtool check metrics <"$state/metrics.txt" || fail "promtool check metrics: the text is not right"
# node2: its GPUs idle and unallocated; no job there.
url="http://127.0.0.1:$(cat "$state/cluster/metrics/node2.port")/metrics"
scrape || fail "node2's /metrics does not answer"
expect drover_node_gpu_allocated 'node="node2",gpu="0"' 0
expect drover_node_jobs 'node="node2"' 0
# sstat reads the same GPUs through the agent: the batch step holds GPU 0 (87 %, 20 GiB).
usage=$(sstat -n -P -j "$job.batch" -o TRESUsageInMax) || fail "sstat: $usage"
case "$usage" in
  *gres/gpumem=20.00G,gres/gpuutil=87,*) ;;
  *) fail "sstat's TRESUsageInMax: $usage" ;;
esac
scancel "$job"
echo "PASS"
