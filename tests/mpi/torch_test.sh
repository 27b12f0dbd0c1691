#!/bin/bash
# torch.distributed (gloo) launched by srun from examples/distributed/torch_ddp.sbatch, on two
# emulated nodes: MASTER_ADDR from `scontrol show hostnames`, an all_reduce over 4 ranks, and
# the requeue path: preempted with --signal=USR1, the job checkpoints, is requeued and resumes.
set -euo pipefail
drover="$1"
root_dir="$2"
source "$root_dir/tests/cli/cluster.sh"
skip_unless_root "to give the emulated nodes' names addresses (a private /etc/hosts)"
/usr/bin/python3 -c "import torch" 2>/dev/null || { echo "FAIL: python3-torch is missing: run scripts/setup --tests" >&2; exit 1; }
if [ -z "${DROVER_TEST_HOSTS:-}" ] && ! unshare -m --propagation private true 2>/dev/null; then
  echo "SKIP: this machine refuses a mount namespace (unshare -m), which gives the emulated nodes' names addresses"
  exit 0
fi
if [ -z "${DROVER_TEST_HOSTS:-}" ]; then
  # Emulated nodes are names of this one host: in a mount namespace of its own, the test (and
  # the cluster it starts) sees /etc/hosts with them, as real nodes' names resolve.
  hosts=$(mktemp)
  cat /etc/hosts >"$hosts"
  echo "127.0.0.1 node1 node2 node3 node4" >>"$hosts"
  exec unshare -m --propagation private env DROVER_TEST_HOSTS="$hosts" \
    bash -c 'mount --bind "$DROVER_TEST_HOSTS" /etc/hosts && rm -f "$DROVER_TEST_HOSTS" && exec "$0" "$@"' \
    "$0" "$@"
fi
getent hosts node1 >/dev/null || fail "node1 does not resolve in the test's namespace"
start_cluster torch --conf "$root_dir/examples/demo/slurm.conf"
cd "$state/work"
cp "$root_dir/examples/distributed/torch_ddp.sbatch" "$root_dir/examples/distributed/train_ddp.py" .
# Debian's python3 (with torch) before any other; gloo over loopback, as the nodes are one host.
export PATH="$(dirname "$drover"):/usr/bin:$PATH" GLOO_SOCKET_IFNAME=lo TMPDIR="$state/tmp"
mkdir -p "$TMPDIR"

# An all_reduce over 4 ranks on two nodes: 1 + 2 + 3 + 4.
TRAIN_STEPS=3 sbatch --wait -o first.out torch_ddp.sbatch >/dev/null || fail "the DDP job failed: $(cat first.out)"
grep -q "done: 3 steps, all_reduce sum 10 over 4 ranks" first.out || fail "all_reduce: $(cat first.out)"

# Requeue: a job in the preemptable partition is preempted by one that needs every node.
export TRAIN_STEPS=60 TRAIN_STEP_SECONDS=0.2 CHECKPOINT="$PWD/resume.pt"
job=$(sbatch --parsable -p preempt -o resume.out torch_ddp.sbatch)
checkpointed() { [ -s resume.pt ] && grep -q "ddp" <(squeue -h -j "$job" -o %j -t R); }
poll 600 checkpointed || fail "the job never ran or checkpointed: $(cat resume.out 2>&1)"
sbatch -p gpu -N4 --exclusive -o /dev/null --wrap "sleep 1" >/dev/null
finished() { [ "$(sacct -n -X -j "$job" -o State -P 2>/dev/null | tail -1)" = COMPLETED ]; }
poll 1200 finished || fail "the requeued job did not finish: $(scontrol show job "$job" | head -5); $(cat resume.out)"
grep -q "^checkpoint at step" resume.out || fail "no checkpoint on USR1: $(cat resume.out)"
step=$(sed -n 's/^checkpoint at step \([0-9]*\)$/\1/p' resume.out | head -1)
grep -q "^resumed from step $step (restart 1)" resume.out || fail "no resume from step $step: $(cat resume.out)"
grep -q "done: 60 steps, all_reduce sum 10 over 4 ranks" resume.out || fail "the resumed run: $(cat resume.out)"
echo PASS
