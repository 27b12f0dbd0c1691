# mpi4py: every rank's number summed across the world, printed with where the rank ran.
import os
import sys

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
if len(sys.argv) > 1 and sys.argv[1] == "fail" and rank == comm.Get_size() - 1:
    os._exit(3)  # the last rank dies (no MPI_Finalize); the others wait in the Allreduce
if len(sys.argv) > 1 and sys.argv[1] == "abort" and rank == 1:
    comm.Abort(5)
total = comm.allreduce(rank, op=MPI.SUM)
if len(sys.argv) > 1 and sys.argv[1] == "stdin" and rank == 0:
    # srun's stdin, read only after MPI_Init's fences: it must not have held them up.
    sys.stdout.write(f"rank 0 read {len(sys.stdin.buffer.read())} bytes of stdin\n")
# One write per line: the ranks' lines reach srun whole.
sys.stdout.write(f"rank {rank} of {comm.Get_size()} on {os.environ['SLURMD_NODENAME']}: sum {total}\n")
sys.stdout.flush()
