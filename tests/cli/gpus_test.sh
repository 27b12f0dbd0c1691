#!/bin/bash
# NVML identity and health through the commands, on a local cluster (drover up --nvml with the
# tests' stand-in NVML library, described by a file; loopback, its own state, every process
# stopped at exit): scontrol show node and sinfo show the GPUs' type and sockets as the agent
# found them, a job's GPUs are traced by UUID (scontrol show job -d, sacct's AllocGPUs), and an
# XID on one GPU drains the node with a reason that names it, held until an operator resumes it;
# MIG devices are GPUs of their own profile's type, named by UUID in CUDA_VISIBLE_DEVICES.
# Usage: gpus_test.sh DROVER FAKE_NVML_LIBRARY
set -euo pipefail
drover="$1"
fake_nvml="$2"
source "$(dirname "$0")/cluster.sh"
conf="$(mktemp -d /tmp/drover_gpus_conf_XXXXXX)"
trap 'rm -rf "$conf"' EXIT
cat > "$conf/slurm.conf" <<CONF
ClusterName=gpus
SlurmctldHost=localhost
GresTypes=gpu
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=100
HealthCheckInterval=1
NodeName=node[1-2] NodeHostname=localhost NodeAddr=127.0.0.1 Sockets=2 CoresPerSocket=2 RealMemory=4000 Gres=gpu:h100:2
NodeName=node3 NodeHostname=localhost NodeAddr=127.0.0.1 Sockets=2 CoresPerSocket=2 RealMemory=4000 Gres=gpu:h100:1,gpu:1g.10gb:3
PartitionName=p Nodes=node[1-3] Default=YES MaxTime=10:00 State=UP
CONF
echo "AutoDetect=nvml" > "$conf/gres.conf"
describe() {  # EXTRA for node2's second GPU
  {
    for node in node1 node2; do
      echo "node $node"
      echo "gpu name=\"NVIDIA H100 80GB HBM3\" uuid=GPU-$node-a minor=0 bus=0x18 cpus=0-1"
      echo "gpu name=\"NVIDIA H100 80GB HBM3\" uuid=GPU-$node-b minor=1 bus=0x2a cpus=2-3 ${1:-}"
    done
    # node3: its first GPU in MIG mode, cut into three 1g.10gb devices; its second whole.
    echo "node node3"
    echo "gpu name=\"NVIDIA H100 80GB HBM3\" uuid=GPU-node3-a minor=0 bus=0x18 cpus=0-1 mig=1:9856x3"
    echo "gpu name=\"NVIDIA H100 80GB HBM3\" uuid=GPU-node3-b minor=1 bus=0x2a cpus=2-3"
  } > "$conf/nvml.conf.new"
  mv "$conf/nvml.conf.new" "$conf/nvml.conf"
}
describe ""
export FAKE_NVML_CONFIG="$conf/nvml.conf"
start_cluster gpus --conf "$conf/slurm.conf" --nvml "$fake_nvml"
trap 'cleanup_cluster; rm -rf "$conf"' EXIT
cd "$state/work"

# slurm.conf's type h100 is a substring of NVML's name: the node keeps it; the sockets are the
# GPUs' local cores' (CPUs 0-1 on socket 0, 2-3 on socket 1).
gres=$(scontrol show node node1 | grep -o 'Gres=[^ ]*')
[ "$gres" = "Gres=gpu:h100:2(S:0-1)" ] || fail "scontrol show node: $gres"
[ "$(sinfo -h -N -n node1 -o %G)" = "gpu:h100:2(S:0-1)" ] || fail "sinfo %G: $(sinfo -h -N -o %G)"

job=$(sbatch --parsable -w node2 --gpus=2 -o /dev/null --wrap "sleep 60")
for _ in $(seq 1 300); do
  [ "$(squeue -h -j "$job" -o %T)" = RUNNING ] && break
  sleep 0.1
done
detail=$(scontrol show job -d "$job" | grep -o ' GRES=.*' | cut -c2-)
[ "$detail" = "GRES=gpu:h100:2(IDX:0-1) GPU_UUIDs=GPU-node2-a,GPU-node2-b" ] ||
  fail "scontrol show job -d: $detail"
traced=$(sacct -n -P -X -j "$job" -o AllocGPUs)
[ "$traced" = "node2:0=GPU-node2-a,node2:1=GPU-node2-b" ] || fail "sacct AllocGPUs: $traced"

# An XID 79 on node2's second GPU: drained, naming it; still drained once the probes find
# nothing new; an operator's resume returns it.
describe "xid=79"
for _ in $(seq 1 300); do
  case "$(sinfo -h -N -n node2 -o %T)" in draining | drained) break ;; esac
  sleep 0.1
done
reason=$(sinfo -h -N -n node2 -o %E)
[ "$reason" = "gpu 1 (GPU-node2-b): XID 79" ] || fail "drain reason: $reason"
scancel "$job"
for _ in $(seq 1 300); do
  [ "$(sinfo -h -N -n node2 -o %T)" = drained ] && break
  sleep 0.1
done
sleep 2.5  # probes that find nothing new since
[ "$(sinfo -h -N -n node2 -o %T)" = drained ] || fail "not held drained: $(sinfo -N)"
scontrol update nodename=node2 state=resume
[ "$(sinfo -h -N -n node2 -o %T)" = idle ] || fail "not resumed: $(sinfo -N)"
metrics=$(bash -c "exec 3<>/dev/tcp/127.0.0.1/$(cat "$state/cluster/http.port");
  printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3; cat <&3")
grep -q '^drover_gpu_last_xid{node="node2",gpu="1",uuid="GPU-node2-b"} 79$' <<< "$metrics" ||
  fail "metrics: $(grep drover_gpu_last_xid <<< "$metrics")"
# MIG: node3's MIG devices are GPUs of type 1g.10gb (the configured type in NVML's MIG name),
# numbered before the whole GPU that follows them, and named by UUID in CUDA_VISIBLE_DEVICES.
gres=$(scontrol show node node3 | grep -o 'Gres=[^ ]*')
[ "$gres" = "Gres=gpu:1g.10gb:3(S:0),gpu:h100:1(S:1)" ] || fail "MIG node: $gres"
report='echo "$SLURM_JOB_GPUS|$CUDA_VISIBLE_DEVICES"; sleep 30'
first=$(sbatch --parsable -w node3 --gres=gpu:1g.10gb:1 -o mig1.out --wrap "$report")
second=$(sbatch --parsable -w node3 --gres=gpu:1g.10gb:2 -o mig2.out --wrap "$report")
whole=$(sbatch --parsable -w node3 --gres=gpu:h100:1 -o whole.out --wrap "$report")
for out in mig1.out mig2.out whole.out; do
  for _ in $(seq 1 300); do
    [ -s "$out" ] && break
    sleep 0.1
  done
done
[ "$(cat mig1.out)" = "0|MIG-node3-a-0" ] || fail "first MIG job: $(cat mig1.out)"
[ "$(cat mig2.out)" = "1,2|MIG-node3-a-1,MIG-node3-a-2" ] || fail "second: $(cat mig2.out)"
[ "$(cat whole.out)" = "3|3" ] || fail "the whole GPU's job: $(cat whole.out)"
detail=$(scontrol show job -d "$second" | grep -o 'GPU_UUIDs=[^ ]*')
[ "$detail" = "GPU_UUIDs=MIG-node3-a-1,MIG-node3-a-2" ] || fail "MIG job's UUIDs: $detail"
scancel "$first" "$second" "$whole"
echo "PASS"
