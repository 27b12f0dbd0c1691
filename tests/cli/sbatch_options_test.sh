#!/bin/bash
# sbatch's options end to end on a local emulated cluster (drover up, the demo configuration:
# ClusterName=demo, nodes of 2 sockets x 8 cores and no TmpDisk): -M names the cluster and
# refuses another, node minimums no node meets are refused at submission, #PBS lines, the
# variables sbatch hands to the job, and --priority (an operator's, or refused).
set -euo pipefail
drover="$1"
source "$(dirname "$0")/cluster.sh"
start_cluster sbatch_options
cd "$state/work"

# -M: the cluster's own name or all, which Slurm then names; any other is refused.
out=$(sbatch -M demo --hold --wrap true)
[[ "$out" =~ ^Submitted\ batch\ job\ [0-9]+\ on\ cluster\ demo$ ]] || fail "-M demo: '$out'"
out=$(SLURM_CLUSTERS=all sbatch --parsable --hold --wrap true)
[[ "$out" =~ ^[0-9]+\;demo$ ]] || fail "SLURM_CLUSTERS=all --parsable: '$out'"
if err=$(sbatch -M elsewhere --wrap true 2>&1); then fail "-M elsewhere was accepted"; fi
[ "$err" = "sbatch: error: 'elsewhere' can't be reached now, or it is an invalid entry for --cluster.  Use 'sacctmgr list clusters' to see available clusters." ] ||
  fail "-M elsewhere: '$err'"

# Node minimums: -B 2:8:1 fits the nodes; more sockets, or any --tmp, fits none.
sbatch --hold -B 2:8:1 --mincpus=16 --wrap true >/dev/null || fail "-B 2:8:1 --mincpus=16 refused"
for option in -B4 --tmp=1G --mincpus=17; do
  if err=$(sbatch "$option" --wrap true 2>&1); then fail "$option was accepted"; fi
  [[ "$err" == "sbatch: error: Batch job submission failed: Requested node configuration is not available"* ]] ||
    fail "$option: '$err'"
done

# #PBS lines, and what sbatch hands to the job's steps.
cat > pbs.sh <<'SCRIPT'
#!/bin/bash
#PBS -N pbsjob
#PBS -l walltime=00:30:00
echo "dist=$SLURM_DISTRIBUTION freq=$SLURM_CPU_FREQ_REQ overcommit=$SLURM_OVERCOMMIT"
SCRIPT
# --wait: sbatch returns once the job has ended, with its exit code.
id=$(sbatch --wait --parsable -m cyclic --cpu-freq=high -O -o pbs.out pbs.sh) ||
  fail "job $id: $(sacct -j "$id")"
[ "$(sacct -X -n -P -j "$id" -o JobName,Timelimit)" = "pbsjob|00:30:00" ] ||
  fail "#PBS lines: $(sacct -X -n -P -j "$id" -o JobName,Timelimit)"
grep -qx "dist=cyclic freq=high overcommit=1" pbs.out || fail "variables: $(cat pbs.out)"
id=$(sbatch --parsable --hold --ignore-pbs pbs.sh)
[ "$(squeue -h -j "$id" -o %j)" = pbs.sh ] || fail "--ignore-pbs read #PBS lines"

# --priority: an operator's stands instead of the computed one; anyone else is refused.
if [ "$(id -u)" = 0 ]; then
  id=$(sbatch --parsable --begin=now+1hour --priority=12345 --wrap true)
  for _ in $(seq 1 100); do
    [ "$(squeue -h -j "$id" -o %Q)" = 12345 ] && break
    sleep 0.1
  done
  [ "$(squeue -h -j "$id" -o %Q)" = 12345 ] || fail "--priority: $(squeue -h -j "$id" -o %Q)"
else
  err=$(sbatch --priority=12345 --wrap true 2>&1) && fail "--priority accepted from a user"
  [ "$err" = "sbatch: error: Batch job submission failed: Access/permission denied" ] ||
    fail "--priority: '$err'"
fi
echo "sbatch options: ok"
