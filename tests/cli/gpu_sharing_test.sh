#!/bin/bash
# GPU sharing through the commands, on a local emulated cluster (loopback, its own state, every
# process stopped at exit): gres/shard jobs pack onto one GPU with SLURM_SHARDS_ON_NODE and the
# GPU in CUDA_VISIBLE_DEVICES, a GPU shared is not given whole (nor a whole one shared), the
# commands show the shares (squeue %b, scontrol show job and node, sinfo GresUsed, sacct
# AllocTRES), gres/mps sets CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, and requests that cannot be met
# are refused at submission; gres/nvme gives whole drives with a scratch folder wiped at the end.
# Usage: gpu_sharing_test.sh DROVER
set -euo pipefail
drover="$1"
source "$(dirname "$0")/cluster.sh"
conf="$(mktemp -d /tmp/drover_sharing_conf_XXXXXX)"
trap 'rm -rf "$conf"' EXIT
cat > "$conf/slurm.conf" <<CONF
ClusterName=sharing
SlurmctldHost=localhost
GresTypes=gpu,shard,mps,nvme
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=100
NodeName=node1 NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=8 RealMemory=4000 Gres=gpu:2,shard:8,nvme:2
NodeName=node2 NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=8 RealMemory=4000 Gres=gpu:1,mps:100
PartitionName=p Nodes=node[1-2] Default=YES MaxTime=10:00 State=UP
CONF
# node1's NVMe drives: two folders standing in for their mount points.
mkdir -p "$conf/nvme0" "$conf/nvme1"
echo "NodeName=node1 Name=nvme File=$conf/nvme[0-1]" > "$conf/gres.conf"
# A stand-in for NVIDIA's MPS control program where the agents look for it (their PATH): -d
# starts a "daemon" that records which GPU it serves; "quit" on stdin stops it.
mkdir -p "$conf/bin"
cat > "$conf/bin/nvidia-cuda-mps-control" <<'MPS'
#!/bin/sh
if [ "${1:-}" = -d ]; then
  echo "$CUDA_VISIBLE_DEVICES" > "$CUDA_MPS_PIPE_DIRECTORY/serving"
  sleep 300 < /dev/null > /dev/null 2>&1 &
  echo $! > "$CUDA_MPS_PIPE_DIRECTORY/daemon.pid"
  exit 0
fi
read -r command
[ "$command" = quit ] || exit 1
kill "$(cat "$CUDA_MPS_PIPE_DIRECTORY/daemon.pid")"
rm -f "$CUDA_MPS_PIPE_DIRECTORY/daemon.pid"
MPS
chmod +x "$conf/bin/nvidia-cuda-mps-control"
export PATH="$conf/bin:$PATH"
start_cluster sharing --conf "$conf/slurm.conf"
trap 'cleanup_cluster; rm -rf "$conf"' EXIT
cd "$state/work"

wait_state() {  # JOB STATE
  for _ in $(seq 1 300); do
    [ "$(squeue -h -j "$1" -o %T)" = "$2" ] && return 0
    sleep 0.1
  done
  fail "job $1 is $(squeue -h -j "$1" -o %T), not $2"
}
wait_file() {
  for _ in $(seq 1 300); do
    [ -s "$1" ] && return 0
    sleep 0.1
  done
  fail "no $1"
}
report='echo "$SLURM_SHARDS_ON_NODE|$CUDA_VISIBLE_DEVICES|$SLURM_JOB_GPUS|${CUDA_MPS_ACTIVE_THREAD_PERCENTAGE:-}"'

gres=$(scontrol show node node1 | grep -o 'Gres=[^ ]*')
[ "$gres" = "Gres=gpu:2,shard:8,nvme:2" ] || fail "scontrol show node: $gres"

# Two jobs share GPU 0 (3 + 1 of its 4 shards); a whole-GPU job gets GPU 1.
a=$(sbatch --parsable -w node1 --gres=shard:3 -o a.out --wrap "$report; sleep 60")
wait_state "$a" RUNNING
b=$(sbatch --parsable -w node1 --gres=shard:1 -o b.out --wrap "$report; sleep 60")
wait_state "$b" RUNNING
wait_file a.out
wait_file b.out
[ "$(cat a.out)" = "3|0|0|" ] || fail "job a's variables: $(cat a.out)"
[ "$(cat b.out)" = "1|0|0|" ] || fail "job b's variables: $(cat b.out)"
whole=$(sbatch --parsable -w node1 --gpus=1 -o whole.out --wrap "$report; sleep 60")
wait_state "$whole" RUNNING
wait_file whole.out
[ "$(cat whole.out)" = "|1|1|" ] || fail "the whole-GPU job's variables: $(cat whole.out)"
# Nothing left to share on node1, and no GPU free whole.
more=$(sbatch --parsable -w node1 --gres=shard:1 -o /dev/null --wrap "true")
two=$(sbatch --parsable -w node1 --gpus=1 -o /dev/null --wrap "true")
sleep 1.5
[ "$(squeue -h -j "$more" -o %T:%r)" = PENDING:Resources ] || fail "more: $(squeue -j "$more")"
[ "$(squeue -h -j "$two" -o %T)" = PENDING ] || fail "two: $(squeue -j "$two")"

# The commands show the shares.
[ "$(squeue -h -j "$a" -o %b)" = "gres:shard:3" ] || fail "squeue %b: $(squeue -h -j "$a" -o %b)"
show=$(scontrol show job -d "$a")
grep -q 'TresPerNode=gres:shard:3' <<< "$show" || fail "TresPerNode: $show"
grep -q 'TRES=cpu=1,mem=100M,node=1,billing=1,gres/shard=3' <<< "$show" || fail "TRES: $show"
grep -q 'JOB_GRES=shard:3' <<< "$show" || fail "JOB_GRES: $show"
grep -q ' GRES=shard:3(IDX:0)' <<< "$show" || fail "-d GRES: $show"
used=$(sinfo -h -N -n node1 -O gresused:60 | tr -d " ")
[ "$used" = "gpu:1(IDX:1),shard:4(IDX:0),nvme:0(IDX:N/A)" ] || fail "sinfo GresUsed: $used"
alloc=$(scontrol show node node1 | grep -o 'AllocTRES=[^ ]*')
[ "$alloc" = "AllocTRES=cpu=3,mem=300M,gres/gpu=1,gres/shard=4" ] || fail "node $alloc"
tres=$(sacct -n -P -X -j "$a" -o AllocTRES)
[ "$tres" = "billing=1,cpu=1,gres/shard=3,mem=100M,node=1" ] || fail "sacct AllocTRES: $tres"

# Once the sharing jobs end the GPU is whole again.
scancel "$a" "$b" "$more"
for _ in $(seq 1 300); do
  [ "$(squeue -h -j "$two" -o %T)" = PENDING ] || break
  sleep 0.1
done
[ "$(squeue -h -j "$two" -o %T)" != PENDING ] || fail "the GPU did not come back whole: $(squeue)"
scancel "$whole" "$two" 2>/dev/null || true

# MPS: a quarter of node2's GPU's 100 units, served by the GPU's control daemon, which the
# agent started for the job and stops once it has ended.
m=$(sbatch --parsable --gres=mps:25 -o m.out \
  --wrap "$report; echo \$CUDA_MPS_PIPE_DIRECTORY; sleep 2")
wait_file m.out
[ "$(head -1 m.out)" = "|0|0|25" ] || fail "the MPS job's variables: $(cat m.out)"
pipe=$(sed -n 2p m.out)
[ -n "$pipe" ] && [ -f "$pipe/daemon.pid" ] || fail "no MPS daemon for the job: $(cat m.out)"
[ "$(cat "$pipe/serving")" = 0 ] || fail "the daemon serves GPU $(cat "$pipe/serving")"
daemon=$(cat "$pipe/daemon.pid")
for _ in $(seq 1 300); do
  [ -f "$pipe/daemon.pid" ] || break
  sleep 0.1
done
[ ! -f "$pipe/daemon.pid" ] || fail "the MPS daemon was not stopped after the job"
# Gone, or a zombie its new parent has yet to reap.
[ ! -d "/proc/$daemon" ] || grep -q '^State:[[:space:]]*Z' "/proc/$daemon/status" ||
  fail "the MPS daemon $daemon still runs"

# NVMe: a drive of its own, with a scratch folder on it that is the job's and is wiped at its
# end (on an emulated node under the node's name).
n=$(sbatch --parsable -w node1 --gres=nvme:1 -o n.out \
  --wrap 'echo "$DROVER_NVME_DIRS"; echo data > "$DROVER_NVME_DIRS/file"; sleep 30')
wait_file n.out
scratch=$(cat n.out)
[ "$scratch" = "$conf/nvme0/node1/job_$n" ] || fail "DROVER_NVME_DIRS=$scratch"
for _ in $(seq 1 100); do
  [ -s "$scratch/file" ] && break
  sleep 0.1
done
[ "$(stat -c %a "$scratch")" = 700 ] || fail "the scratch folder is $(stat -c %a "$scratch")"
[ "$(squeue -h -j "$n" -o %b)" = "gres:nvme:1" ] || fail "squeue %b: $(squeue -h -j "$n" -o %b)"
scontrol show job -d "$n" | grep -q ' GRES=nvme:1(IDX:0)' || fail "$(scontrol show job -d "$n")"
n2=$(sbatch --parsable -w node1 --gres=nvme:2 -o /dev/null --wrap true)
sleep 1
[ "$(squeue -h -j "$n2" -o %T)" = PENDING ] || fail "two drives while one is taken: $(squeue)"
scancel "$n" "$n2"
for _ in $(seq 1 300); do
  [ -d "$scratch" ] || break
  sleep 0.1
done
[ ! -d "$scratch" ] || fail "the scratch folder outlived the job: $(ls -la "$scratch")"

# Refused at submission, with what to do.
refused() {  # EXPECTED-TEXT SBATCH-ARGS...
  local expected="$1"
  shift
  if out=$(sbatch "$@" --wrap true 2>&1); then fail "sbatch $* was accepted: $out"; fi
  grep -q -- "$expected" <<< "$out" || fail "sbatch $*: $out"
}
refused "a GPU with 5 shards" --gres=shard:5
refused "3 NVMe drives" --gres=nvme:3
refused "a job asks for whole GPUs or for shards of one, not both" --gres=gpu:1,shard:1
refused "Drover schedules gres/gpu, gres/shard, gres/mps and gres/nvme only" --gres=nic:1
echo "gpu sharing: ok"
