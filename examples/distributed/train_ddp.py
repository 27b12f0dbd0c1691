# A minimal torch.distributed training loop as srun starts it: each task is one rank (RANK,
# WORLD_SIZE and LOCAL_RANK from SLURM_PROCID, SLURM_NTASKS and SLURM_LOCALID), the rendezvous is
# MASTER_ADDR:MASTER_PORT (the batch script sets them), and every step all-reduces a tensor.
# SIGUSR1 (sbatch --signal=USR1@SECONDS, sent before a preemption or the time limit) makes the
# ranks agree to stop, rank 0 save a checkpoint and the job exit to be requeued; a requeued run
# resumes from the checkpoint.
import os
import signal
import sys
import time

import torch
import torch.distributed as dist

steps = int(os.environ.get("TRAIN_STEPS", "100"))
step_seconds = float(os.environ.get("TRAIN_STEP_SECONDS", "0.1"))
checkpoint = os.environ.get("CHECKPOINT", "checkpoint.pt")

rank = int(os.environ["SLURM_PROCID"])
world = int(os.environ["SLURM_NTASKS"])
os.environ.setdefault("LOCAL_RANK", os.environ["SLURM_LOCALID"])
stop_asked = False


def ask_to_stop(signum, frame):
    global stop_asked
    stop_asked = True


signal.signal(signal.SIGUSR1, ask_to_stop)
dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world)

start = 0
if os.path.exists(checkpoint):
    start = torch.load(checkpoint)["step"]
    if rank == 0:
        print(f"resumed from step {start} (restart {os.environ.get('SLURM_RESTART_COUNT', '0')})", flush=True)

total = torch.zeros(1)
for step in range(start, steps):
    value = torch.tensor([float(rank + 1)])
    dist.all_reduce(value)  # 1 + 2 + ... + world
    total = value
    # Every rank learns whether any rank was asked to stop, so they stop at the same step.
    flag = torch.tensor([1.0 if stop_asked else 0.0])
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    if flag.item() > 0:
        if rank == 0:
            torch.save({"step": step}, checkpoint)
            print(f"checkpoint at step {step}", flush=True)
        dist.barrier()
        dist.destroy_process_group()
        sys.exit(0)
    if rank == 0 and step % 10 == 0:
        torch.save({"step": step}, checkpoint)  # a checkpoint now and then, as training does
    time.sleep(step_seconds)

if rank == 0:
    print(f"done: {steps} steps, all_reduce sum {total.item():g} over {world} ranks", flush=True)
dist.destroy_process_group()
