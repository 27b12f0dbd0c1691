#!/bin/bash
# sbatch's options end to end on a local emulated cluster (drover up, the demo configuration:
# ClusterName=demo, nodes of 2 sockets x 8 cores and no TmpDisk): -M names the cluster and
# refuses another, node minimums no node meets are refused at submission, #PBS lines, the
# variables sbatch hands to the job, --priority (an operator's, or refused), and the placement
# options against two more lines of configuration (Licenses=fluent:2; node[3-4] also have the
# feature fast): -L waits with reason Licenses and runs once they are back, --prefer and its
# fallback, --batch's host.
set -euo pipefail
drover="$1"
source "$(dirname "$0")/cluster.sh"
conf="$(mktemp -d /tmp/drover_sbatch_options_conf_XXXXXX)"
cp "$(dirname "$0")"/../../examples/demo/*.conf "$conf/"
sed -i 's/^NodeName=node\[1-4\] \(.*\) Features=a100 \(.*\)$/NodeName=node[1-2] \1 Features=a100 \2\nNodeName=node[3-4] \1 Features=a100,fast \2/' \
  "$conf/slurm.conf"
echo "Licenses=fluent:2" >>"$conf/slurm.conf"
grep -q "^NodeName=node\[3-4\].*Features=a100,fast" "$conf/slurm.conf" ||
  { echo "FAIL: the demo's NodeName line changed"; exit 1; }
start_cluster sbatch_options --conf "$conf/slurm.conf"
rm -rf "$conf"
cd "$state/work"

wait_for() {  # wait_for JOBID FORMAT VALUE: until squeue -o FORMAT prints VALUE (10 s at most)
  for _ in $(seq 1 100); do
    [ "$(squeue -h -j "$1" -o "$2")" = "$3" ] && return 0
    sleep 0.1
  done
  fail "job $1: squeue -o $2 is '$(squeue -h -j "$1" -o "$2")', not '$3'"
}
field() {  # field JOBID KEY: one value of scontrol show job -o
  scontrol -o show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1
}

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
  # A listing of few lines against many jobs asks for the priorities of its lines by ID (40
  # pending tasks fold into one line): the array's and the job's still print.
  arr=$(sbatch --parsable --begin=now+1hour --priority=23456 --array=0-39 --wrap true)
  for _ in $(seq 1 100); do
    [ "$(squeue -h -o '%i %Q' | grep -c -x -e "${arr}_\[0-39\] 23456" -e "$id 12345")" = 2 ] &&
      break
    sleep 0.1
  done
  [ "$(squeue -h -o '%i %Q' | grep -c -x -e "${arr}_\[0-39\] 23456" -e "$id 12345")" = 2 ] ||
    fail "priorities of folded lines: $(squeue -h -o '%i %Q')"
  scancel "$arr"
else
  err=$(sbatch --priority=12345 --wrap true 2>&1) && fail "--priority accepted from a user"
  [ "$err" = "sbatch: error: Batch job submission failed: Access/permission denied" ] ||
    fail "--priority: '$err'"
fi
# Licenses: two fluent in all. A job holding both makes the next wait with reason Licenses until
# they are back; names the cluster lacks, or more than it has, are refused at submission.
holder=$(sbatch --parsable -L fluent:2 --wrap "sleep 300")
wait_for "$holder" %T RUNNING
waiting=$(sbatch --parsable -L fluent --wrap "sleep 300")
wait_for "$waiting" %r Licenses
[ "$(squeue -h -j "$holder" -o %W)" = fluent:2 ] || fail "%W: $(squeue -h -j "$holder" -o %W)"
[ "$(field "$holder" Licenses)" = fluent:2 ] || fail "show job Licenses=$(field "$holder" Licenses)"
[ "$(scontrol -o show licenses fluent)" = "LicenseName=fluent Total=2 Used=2 Free=0 Reserved=0 Remote=no" ] ||
  fail "show licenses: $(scontrol -o show licenses fluent)"
[ "$(squeue -h -L fluent -o %i | sort -n | tr '\n' ' ')" = "$holder $waiting " ] ||
  fail "squeue -L fluent: $(squeue -h -L fluent -o %i)"
scancel "$holder"
wait_for "$waiting" %T RUNNING
scancel "$waiting"
for request in matlab fluent:3; do
  if err=$(sbatch -L "$request" --wrap true 2>&1); then fail "-L $request was accepted"; fi
  [[ "$err" == "sbatch: error: Batch job submission failed: Invalid license specification"* ]] ||
    fail "-L $request: '$err'"
done

# --prefer: the fast nodes while they can hold the job; three nodes cannot all be fast, so the
# preference is dropped and the job runs anyway.
preferred=$(sbatch --parsable --prefer=fast --wrap "sleep 300")
wait_for "$preferred" %T RUNNING
[[ "$(squeue -h -j "$preferred" -o %N)" =~ ^node[34]$ ]] ||
  fail "--prefer=fast ran on $(squeue -h -j "$preferred" -o %N)"
[ "$(field "$preferred" Prefer)" = fast ] || fail "show job Prefer=$(field "$preferred" Prefer)"
wide=$(sbatch --parsable --prefer=fast -N3 --wrap "sleep 300")
wait_for "$wide" %T RUNNING
# --batch: the script runs on an allocated node with the feature, not on the first node.
batch=$(sbatch --parsable --batch=fast -N2 -w node1 -o batch.out \
  --wrap 'echo "$SLURMD_NODENAME"; sleep 300')
wait_for "$batch" %T RUNNING
for _ in $(seq 1 100); do [ -s batch.out ] && break; sleep 0.1; done
host=$(field "$batch" BatchHost)
[[ "$host" =~ ^node[34]$ ]] || fail "--batch=fast BatchHost=$host ($(squeue -h -j "$batch" -o %N))"
[ "$(cat batch.out)" = "$host" ] || fail "--batch=fast ran on '$(cat batch.out)', BatchHost=$host"
scancel "$preferred" "$wide" "$batch"
echo "sbatch options: ok"
