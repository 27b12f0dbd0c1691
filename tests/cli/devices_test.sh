#!/bin/bash
# ConstrainDevices end to end on a local cluster (drover up, loopback, its own state; every
# process stopped at exit): gres.conf's File= names character devices this test makes with
# mknod, and a job given one GPU can open it but gets EPERM on the other, through the job's
# cgroup (v1 devices.deny, or v2's eBPF program), with CUDA_VISIBLE_DEVICES renumbered from 0
# and SLURM_JOB_GPUS the node's index, as Slurm sets them. Needs root (mknod, cgroups): skipped
# otherwise.
set -euo pipefail
drover="$1"
source "$(dirname "$0")/cluster.sh"
skip_unless_root "to make device nodes and cgroups"
conf="$(mktemp -d /tmp/drover_devices_conf_XXXXXX)"
trap 'rm -rf "$conf"' EXIT
mkdir "$conf/dev"
# Two "GPUs" whose device numbers are /dev/full's and /dev/urandom's: opening one works
# unless the cgroup denies it.
mknod -m 666 "$conf/dev/gpu0" c 1 7
mknod -m 666 "$conf/dev/gpu1" c 1 9
cat > "$conf/slurm.conf" <<CONF
ClusterName=devices
SlurmctldHost=localhost
GresTypes=gpu
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=100
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup
NodeName=node1 NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=4 RealMemory=4000 Gres=gpu:2
PartitionName=p Nodes=node1 Default=YES MaxTime=10:00 State=UP
CONF
echo "NodeName=node1 Name=gpu File=$conf/dev/gpu[0-1]" > "$conf/gres.conf"
echo "ConstrainDevices=yes" > "$conf/cgroup.conf"
start_cluster devices --conf "$conf/slurm.conf"
trap 'cleanup_cluster; rm -rf "$conf"' EXIT
cd "$state/work"

probe() {  # DEVICE: "ok" when it opens, else the error (no file: jobs probe at once)
  local err
  if err=$(head -c 1 "$1" 2>&1 >/dev/null); then echo ok; else echo "${err##*: }"; fi
}
cat > probe.sh <<SCRIPT
#!/bin/bash
#SBATCH --gpus=1 -o probe.out
$(declare -f probe)
echo "visible=\$CUDA_VISIBLE_DEVICES job_gpus=\$SLURM_JOB_GPUS"
echo "gpu0=\$(probe $conf/dev/gpu0) gpu1=\$(probe $conf/dev/gpu1)"
SCRIPT
first=$(sbatch --parsable probe.sh)
for _ in $(seq 1 300); do
  case "$(sacct -X -n -P -j "$first" -o State)" in PENDING|RUNNING|"") sleep 0.1 ;; *) break ;; esac
done
[ "$(sacct -X -n -P -j "$first" -o State)" = COMPLETED ] || fail "job $first: $(sacct -j "$first")"
# The job was given GPU 0 (the first free one): GPU 1 is denied by its cgroup.
cat > probe.expected <<TEXT
visible=0 job_gpus=0
gpu0=ok gpu1=Operation not permitted
TEXT
diff probe.expected probe.out || fail "device isolation: $(cat probe.out)"
# Two jobs at once get one GPU each, and each is denied the other's.
a=$(sbatch --parsable --wrap "bash $state/work/probe.sh; sleep 3" --gpus=1 -o "probe-a.out")
b=$(sbatch --parsable --wrap "bash $state/work/probe.sh; sleep 3" --gpus=1 -o "probe-b.out")
for id in "$a" "$b"; do
  for _ in $(seq 1 300); do
    case "$(sacct -X -n -P -j "$id" -o State)" in PENDING|RUNNING|"") sleep 0.1 ;; *) break ;; esac
  done
done
grep -h . probe-a.out probe-b.out | sort > both.txt
cat > both.expected <<TEXT
gpu0=Operation not permitted gpu1=ok
gpu0=ok gpu1=Operation not permitted
visible=0 job_gpus=0
visible=0 job_gpus=1
TEXT
diff both.expected both.txt || fail "two jobs: $(cat both.txt)"
# A step given one of its job's two GPUs gets a cgroup of its own that denies the other; a step
# that asked for none sees both, numbered from 0.
cat > steps.sh <<SCRIPT
#!/bin/bash
#SBATCH --gpus=2 -o steps.out
$(declare -f probe)
srun --gpus=1 -n1 bash -c "\$(declare -f probe); echo \"one: visible=\\\$CUDA_VISIBLE_DEVICES step_gpus=\\\$SLURM_STEP_GPUS gpu0=\\\$(probe $conf/dev/gpu0) gpu1=\\\$(probe $conf/dev/gpu1)\""
srun -n1 bash -c "\$(declare -f probe); echo \"all: visible=\\\$CUDA_VISIBLE_DEVICES gpu0=\\\$(probe $conf/dev/gpu0) gpu1=\\\$(probe $conf/dev/gpu1)\""
SCRIPT
steps=$(sbatch --parsable steps.sh)
for _ in $(seq 1 300); do
  case "$(sacct -X -n -P -j "$steps" -o State)" in PENDING|RUNNING|"") sleep 0.1 ;; *) break ;; esac
done
cat > steps.expected <<TEXT
one: visible=0 step_gpus=0 gpu0=ok gpu1=Operation not permitted
all: visible=0,1 gpu0=ok gpu1=ok
TEXT
diff steps.expected steps.out || fail "steps: $(cat steps.out)"
echo PASS
