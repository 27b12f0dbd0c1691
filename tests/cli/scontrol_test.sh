#!/bin/bash
# scontrol against a real cluster (`drover up` on the demo configuration, on loopback, in a
# temporary state directory; `drover down` stops every process it started): show job, node,
# partition, reservation and config (masked golden files), -o, --json, hold/release, update,
# requeue (from outside and from inside the job itself), suspend/resume, write batch_script,
# notify, listpids, pidinfo and show slurmd, node updates (states, weight, features), reboot and
# cancel_reboot, partition create/update/delete, write config, reservations, top, reconfigure,
# setdebug/setdebugflags/schedloglevel, ping and the errors Slurm prints.
# Usage: scontrol_test.sh DROVER GOLDEN_DIR [--regenerate]
set -euo pipefail
drover="$1"
golden="$2"
regenerate="${3:-}"
source "$(dirname "$0")/cluster.sh"
# The symlinks (sbatch, scontrol, ...) beside drover: the batch scripts below call scontrol too.
start_cluster scontrol
[ -x "$(dirname "$drover")/scontrol" ] || fail "no scontrol symlink beside $drover"
# The jobs' account: research, whoever runs the test (root's own default is root's account).
sacctmgr -i add account research >/dev/null || fail "sacctmgr add account research failed"
sacctmgr -i add user "$(id -un)" account=research >/dev/null || true  # root: exit 1 if it exists
sacctmgr -i modify user "$(id -un)" set defaultaccount=research >/dev/null ||
  fail "sacctmgr modify user failed"
cd "$state/work"

# Times, the user, IDs and paths vary from run to run; everything else must match.
mask() {
  sed -E -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}/TIME/g' \
    -e 's/RunTime=[0-9:-]+/RunTime=ELAPSED/' -e 's/Priority=[0-9]+/Priority=N/' \
    -e "s#$state/work#WORKDIR#g" -e "s/UserId=[^ ]+ GroupId=[^ ]+/UserId=USER GroupId=GROUP/" \
    -e "s/Users=$(id -un) /Users=USER /" -e 's/Version=[^ ]+/Version=VERSION/' \
    -e 's/\[[a-z0-9_]+@TIME\]/[USER@TIME]/' \
    -e "s/JobId=${1:-none} /JobId=ID /" -e "s/slurm-${1:-none}\.out/slurm-ID.out/g"
}
# Compares stdin (masked) with a golden file; --regenerate rewrites the file instead.
check_golden() {
  local name="$1" id="${2:-none}"
  mask "$id" > "$state/$name"
  if [ "$regenerate" = --regenerate ]; then cp "$state/$name" "$golden/$name"; return; fi
  diff -u "$golden/$name" "$state/$name" >&2 || fail "$name differs from the golden file"
}
field() {  # field JOBID KEY: one value of scontrol show job -o
  scontrol -o show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1
}
wait_for() {  # wait_for JOBID KEY REGEX: until the whole value matches
  for _ in $(seq 1 300); do
    [[ "$(field "$1" "$2")" =~ ^($3)$ ]] && return 0
    sleep 0.2
  done
  fail "job $1: $2 is $(field "$1" "$2"), not $3"
}

# ---- ping, config, partition, node, hostlists ----
[ "$(scontrol ping)" = "Slurmctld(primary) at localhost is UP" ] || fail "ping: $(scontrol ping)"
scontrol show config > "$state/config.txt" || fail "show config"
grep -qx "ClusterName             = demo" "$state/config.txt" || fail "config: no ClusterName"
[ "$(tail -1 "$state/config.txt")" = "Slurmctld(primary) at localhost is UP" ] || fail "config: no ping line"
scontrol show partition | check_golden scontrol_demo_partition.txt
[ "$(scontrol -o show partition gpu | wc -l)" = 1 ] || fail "show partition -o is not one line"
scontrol show partition nope > /dev/null 2> "$state/err.txt" && fail "an unknown partition was shown"
grep -qx "Partition nope not found" "$state/err.txt" || fail "unknown partition: $(cat "$state/err.txt")"
scontrol show node node2 | check_golden scontrol_demo_node.txt
[ "$(scontrol show hostnames 'node[1-3]' | tr '\n' ' ')" = "node1 node2 node3 " ] || fail "hostnames"
[ "$(scontrol show hostlist node1,node2,node3,node5)" = "node[1-3,5]" ] || fail "hostlist"
[ "$(scontrol show hostlistsorted node3,node1,node2,node1)" = "node[1-3]" ] || fail "hostlistsorted"

# ---- a running job: show job, -o, -d, --json, errors ----
running=$(sbatch --parsable -J sleeper -N1 -n2 --gres=gpu:2 -t 30 -o sleeper.out --wrap "sleep 300")
wait_for "$running" JobState RUNNING
scontrol show job "$running" | check_golden scontrol_demo_job_running.txt "$running"
[ "$(scontrol -o show job "$running" | wc -l)" = 1 ] || fail "-o printed more than one line"
scontrol -d show job "$running" | grep -q "^   JOB_GRES=gpu:a100:2$" || fail "-d: no JOB_GRES"
scontrol show job "$running" --json > "$state/job.json"
grep -q "\"job_id\": $running," "$state/job.json" || fail "--json: $(cat "$state/job.json")"
if command -v python3 > /dev/null; then
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["jobs"][0]["job_state"]=="RUNNING"' \
    "$state/job.json" || fail "--json is not valid JSON"
fi
set +e
scontrol show job 999999 > /dev/null 2> "$state/err.txt"; rc=$?
set -e
[ "$rc" = 1 ] || fail "show job 999999 exited $rc"
grep -qx "slurm_load_jobs error: Invalid job id specified" "$state/err.txt" || fail "show job 999999: $(cat "$state/err.txt")"
scontrol show node node1 | grep -q "^   State=MIXED " || fail "node1 with a job is not MIXED"

# ---- suspend and resume ----
scontrol suspend "$running" || fail "suspend"
wait_for "$running" JobState SUSPENDED
scontrol resume "$running" || fail "resume"
wait_for "$running" JobState RUNNING

# ---- write batch_script, notify (the running batch job's stderr) ----
scontrol write batch_script "$running" - | grep -qx "sleep 300" || fail "write batch_script -: $(scontrol write batch_script "$running" -)"
[ "$(scontrol write batch_script "$running")" = "batch script for job $running written to slurm-$running.sh" ] ||
  fail "write batch_script did not say where"
[ "$(cat "slurm-$running.sh")" = "$(scontrol write batch_script "$running" -)" ] || fail "slurm-$running.sh differs"
scontrol write batch_script "$running" mine.sh > /dev/null && grep -qx "sleep 300" mine.sh || fail "write batch_script FILE"
scontrol write batch_script 999999 gone.sh 2> "$state/err.txt" && fail "the script of an unknown job"
grep -qx "job script retrieval failed: Invalid job id specified" "$state/err.txt" || fail "write unknown: $(cat "$state/err.txt")"
[ ! -e gone.sh ] || fail "a failed write left its file"
scontrol write batch_script 2> "$state/err.txt" && fail "write batch_script without a job"
grep -qx "too few arguments for keyword:batch_script" "$state/err.txt" || fail "write: $(cat "$state/err.txt")"
scontrol notify "$running" checkpoint soon || fail "notify"
for _ in $(seq 1 100); do
  grep -qx "slurmstepd: error: checkpoint soon" sleeper.out && break
  sleep 0.2
done
grep -qx "slurmstepd: error: checkpoint soon" sleeper.out || fail "notify: sleeper.out has $(cat sleeper.out)"
scontrol notify 999999 hello 2> "$state/err.txt" && fail "notify of an unknown job"
grep -qx "job notify failure: Invalid job id specified" "$state/err.txt" || fail "notify unknown: $(cat "$state/err.txt")"

# ---- hold, release, update on a pending job ----
later=$(sbatch --parsable -J later --begin=now+1hour --wrap true)
wait_for "$later" Reason BeginTime
scontrol hold "$later" || fail "hold"
[ "$(field "$later" Priority)" = 0 ] || fail "a held job has priority $(field "$later" Priority)"
wait_for "$later" Reason "JobHeldUser|JobHeldAdmin"
scontrol release "$later" || fail "release"
wait_for "$later" Reason BeginTime
scontrol update JobId="$later" TimeLimit=45 Name=renamed Nice=10 || fail "update job"
[ "$(field "$later" TimeLimit)" = 00:45:00 ] || fail "TimeLimit: $(field "$later" TimeLimit)"
[ "$(field "$later" JobName)" = renamed ] || fail "JobName: $(field "$later" JobName)"
[ "$(field "$later" Nice)" = 10 ] || fail "Nice: $(field "$later" Nice)"
scontrol update job "$later" Partition=preempt || fail "update job Partition"
[ "$(field "$later" Partition)" = preempt ] || fail "Partition: $(field "$later" Partition)"
# Slurm's other keys, its abbreviations (upd), and the job named by JobName= alone.
scontrol upd JobId="$later" Features=a100 NumTasks=2 MinMemoryNode=200 ExcNodeList=node4 \
  Dependency=afterany:"$running" || fail "update job: more keys"
[ "$(field "$later" Features)" = a100 ] || fail "Features: $(field "$later" Features)"
[ "$(field "$later" NumTasks)" = 2 ] || fail "NumTasks: $(field "$later" NumTasks)"
[ "$(field "$later" MinMemoryNode)" = 200M ] || fail "MinMemoryNode: $(field "$later" MinMemoryNode)"
[ "$(field "$later" ExcNodeList)" = node4 ] || fail "ExcNodeList: $(field "$later" ExcNodeList)"
[ "$(field "$later" Dependency)" = "afterany:$running" ] || fail "Dependency: $(field "$later" Dependency)"
scontrol update JobName=renamed Dependency= || fail "update JobName=renamed"
[ "$(field "$later" Dependency)" = "(null)" ] || fail "Dependency cleared: $(field "$later" Dependency)"
scontrol update JobId="$later" Bogus=x 2> "$state/err.txt" && fail "an unknown key was accepted"
grep -qx "Update of this parameter is not supported: Bogus=x" "$state/err.txt" || fail "unknown key: $(cat "$state/err.txt")"
scontrol update JobId="$running" MinMemoryNode=100 2> "$state/err.txt" && fail "a running job's memory changed"
grep -qx "slurm_update error: Job is no longer pending execution" "$state/err.txt" ||
  fail "pending-only key: $(cat "$state/err.txt")"
scontrol update JobId=999999 Nice=1 2> "$state/err.txt" && fail "update of an unknown job succeeded"
grep -qx "slurm_update error: Invalid job id specified" "$state/err.txt" || fail "update unknown job: $(cat "$state/err.txt")"

# ---- show ENTITY=ID, abbreviations, interactive mode, the entities Drover has no use for ----
[ "$(scontrol sho jo="$running" | head -1)" = "$(scontrol show job "$running" | head -1)" ] || fail "sho jo=ID"
scontrol show partitionname=gpu | grep -q "^PartitionName=gpu$" || fail "show partitionname=gpu"
scontrol wait_job "$running" || fail "wait_job of a running job"
printf 'sho jo %s\noneliner\nshow job %s\nexit\nshow node\n' "$running" "$running" | scontrol > "$state/interactive.txt" ||
  fail "interactive mode"
[ "$(grep -c "^JobId=$running " "$state/interactive.txt")" = 2 ] || fail "interactive: $(cat "$state/interactive.txt")"
[ "$(grep -c "NodeName=" "$state/interactive.txt")" = 0 ] || fail "interactive: went on after exit"
[ "$(tail -1 "$state/interactive.txt" | wc -w)" -gt 20 ] || fail "interactive: oneliner was not taken"
[ "$(scontrol show federation)" = "Not a member of a federation" ] || fail "show federation"
[ "$(scontrol show licenses)" = "No licenses configured in Slurm." ] || fail "show licenses"
[ "$(scontrol show frontend)" = "No front end nodes in the system" ] || fail "show frontend"
[ -z "$(scontrol show burstbuffer)" ] || fail "show burstbuffer"
[ "$(scontrol errnumstr 2017)" = "Invalid job id specified" ] || fail "errnumstr"
[ "$(scontrol -M demo ping)" = "Slurmctld(primary) at localhost is UP" ] || fail "-M demo"
scontrol -M other ping 2> "$state/err.txt" && fail "-M other accepted"
grep -q "'other' can't be reached now" "$state/err.txt" || fail "-M other: $(cat "$state/err.txt")"
scontrol -u no_such_user_x update JobId="$running" Comment=x 2> "$state/err.txt" && fail "--uid of no user"
grep -qx 'scontrol: error: --uid="no_such_user_x" invalid' "$state/err.txt" || fail "--uid: $(cat "$state/err.txt")"
set +e
scontrol show bogus 2> "$state/err.txt"; rc=$?
set -e
[ "$rc" = 1 ] && grep -qx "invalid entity:bogus for keyword:show " "$state/err.txt" || fail "show bogus: $rc $(cat "$state/err.txt")"
scontrol bogus 2> "$state/err.txt" && fail "a bad keyword was taken"
grep -qx "invalid keyword: bogus" "$state/err.txt" || fail "bad keyword: $(cat "$state/err.txt")"
# token: Slurm's SLURM_JWT= line (drover up enables auth/jwt); a bad word is Slurm's error.
scontrol token | grep -q '^SLURM_JWT=[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$' ||
  fail "token: $(scontrol token 2>&1)"
scontrol token lifespan=0 2> "$state/err.txt" && fail "token lifespan=0 succeeded"
grep -q "Invalid lifespan: 0" "$state/err.txt" || fail "token lifespan=0: $(cat "$state/err.txt")"
scontrol token colour=red 2> "$state/err.txt" && fail "token colour=red succeeded"
grep -q "Invalid parameter: colour=red" "$state/err.txt" || fail "token: $(cat "$state/err.txt")"
# One SlurmctldHost line: nobody to take over.
scontrol takeover 2> "$state/err.txt" && fail "takeover succeeded without a backup"
grep -qx "slurm_takeover error: no backup controller: slurm.conf names one SlurmctldHost" "$state/err.txt" ||
  fail "takeover: $(cat "$state/err.txt")"

# ---- show step: the srun steps of a running job ----
stepper=$(sbatch --parsable -J stepper -n1 -o stepper.out --wrap "srun -J inner sleep 120")
for _ in $(seq 1 300); do
  scontrol show step "$stepper" | grep -q "^StepId=$stepper.0 " && break
  sleep 0.2
done
scontrol show step "$stepper.0" | grep -q "^   Nodes=1 CPUs=1 Tasks=1 Name=inner " ||
  fail "show step: $(scontrol show step "$stepper")"

# ---- listpids and pidinfo: the processes the job's agent started, as Slurm prints them ----
node=$(field "$stepper" NodeList)
for _ in $(seq 1 300); do
  scontrol listpids "$stepper" "$node" > "$state/pids.txt" 2>&1 &&
    grep -Eq "^[0-9]+ +$stepper +0 +0 +0 *$" "$state/pids.txt" && break
  sleep 0.2
done
[ "$(head -1 "$state/pids.txt")" = "PID      JOBID    STEPID LOCALID GLOBALID" ] ||
  fail "listpids header: $(cat "$state/pids.txt")"
grep -Eq "^[0-9]+ +$stepper +batch +0 +0 *$" "$state/pids.txt" || fail "listpids: no batch shell: $(cat "$state/pids.txt")"
grep -Eq "^[0-9]+ +$stepper +batch +- +- *$" "$state/pids.txt" || fail "listpids: no srun in the batch step: $(cat "$state/pids.txt")"
task=$(awk -v job="$stepper" '$2 == job && $3 == "0" && $4 == "0" {print $1}' "$state/pids.txt")
[ "$(ps -o args= -p "$task")" = "sleep 120" ] || fail "listpids: task $task is $(ps -o args= -p "$task")"
scontrol listpids "$stepper.0" "$node" > "$state/step0.txt" || fail "listpids $stepper.0"
[ "$(tail -n +2 "$state/step0.txt" | awk '$3 != "0"' | wc -l)" = 0 ] &&
  grep -q "^$task " "$state/step0.txt" || fail "listpids JOB.0: $(cat "$state/step0.txt")"
scontrol listpids "$stepper" > /dev/null 2> "$state/err.txt" && fail "listpids chose one of four nodes"
grep -q "all run on this host; give one" "$state/err.txt" || fail "listpids without a node: $(cat "$state/err.txt")"
SLURMD_NODENAME="$node" scontrol listpids "$stepper.batch" | grep -q " batch " || fail "listpids with SLURMD_NODENAME"
[ "$(scontrol listpids 999999 "$node" 2>&1)" = "Job 999999 does not exist on this node." ] ||
  fail "listpids 999999: $(scontrol listpids 999999 "$node" 2>&1)"
[ "$(scontrol listpids 1x "$node" 2>&1)" = "Invalid job id: 1x" ] || fail "listpids 1x"
scontrol pidinfo "$task" > "$state/pidinfo.txt" || fail "pidinfo $task: $(cat "$state/pidinfo.txt")"
grep -Eq "^Slurm job id $stepper ends at [A-Z][a-z]{2} [A-Z][a-z]{2} [0-9]{2} [0-9:]{8} [0-9]{4}$" \
  "$state/pidinfo.txt" || fail "pidinfo: $(cat "$state/pidinfo.txt")"
grep -Eq "^slurm_get_rem_time is [0-9]+$" "$state/pidinfo.txt" || fail "pidinfo: $(cat "$state/pidinfo.txt")"
[ "$(scontrol pidinfo $$ 2>&1)" = "slurm_pid2jobid error: Invalid job id specified" ] ||
  fail "pidinfo of a process in no job: $(scontrol pidinfo $$ 2>&1)"

# ---- show slurmd: the node's agent reports itself, its steps and its host ----
scontrol show slurmd "$node" > "$state/slurmd.txt" || fail "show slurmd: $(cat "$state/slurmd.txt")"
grep -Eq "^Active Steps             = .*$stepper\.0" "$state/slurmd.txt" ||
  fail "show slurmd: no step $stepper.0: $(cat "$state/slurmd.txt")"
grep -Eq "^Actual CPUs              = [1-9][0-9]*$" "$state/slurmd.txt" ||
  fail "show slurmd: CPUs: $(cat "$state/slurmd.txt")"
grep -q "^Hostname                 = $(hostname)$" "$state/slurmd.txt" || fail "show slurmd: host"
agent_pid=$(sed -n 's/^Slurmd PID *= //p' "$state/slurmd.txt")
[ -n "$agent_pid" ] && ps -o args= -p "$agent_pid" | grep -q droverd ||
  fail "show slurmd: PID $agent_pid is not an agent"
grep -Eq "^Last slurmctld msg time  = [0-9]{4}-[0-9]{2}-[0-9]{2}T" "$state/slurmd.txt" ||
  fail "show slurmd: never heard from the controller: $(cat "$state/slurmd.txt")"
grep -q "^Slurmd Debug             = 3$" "$state/slurmd.txt" || fail "show slurmd: debug level"
scontrol show slurmd > /dev/null 2> "$state/err.txt" && fail "show slurmd chose one of four nodes"
grep -q "all run on this host; give one" "$state/err.txt" || fail "show slurmd: $(cat "$state/err.txt")"
scancel "$stepper"
[ "$(scontrol show step 999999)" = "Job step 999999 not found" ] || fail "show step 999999"

# ---- requeue from outside, then requeuehold ----
scontrol requeue "$running" || fail "requeue"
wait_for "$running" Restarts 1
wait_for "$running" JobState RUNNING
scontrol requeuehold "$running" || fail "requeuehold"
wait_for "$running" JobState PENDING
wait_for "$running" Reason "JobHeldUser|JobHeldAdmin"
scancel "$running" "$later"

# ---- requeue from inside the job: it runs again with SLURM_RESTART_COUNT=1, same ID ----
cat > requeue.sh <<'EOF'
#!/bin/bash
echo "run ${SLURM_RESTART_COUNT:-0} job $SLURM_JOB_ID" >> runs.log
echo "run ${SLURM_RESTART_COUNT:-0} job $SLURM_JOB_ID"
if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then
  scontrol requeue "$SLURM_JOB_ID"
  sleep 120
fi
EOF
self=$(sbatch --parsable -J self -o self.out requeue.sh)
wait_for "$self" JobState COMPLETED
[ "$(field "$self" Restarts)" = 1 ] || fail "self-requeue: Restarts=$(field "$self" Restarts)"
grep -qx "run 1 job $self" self.out || fail "self-requeue: the output file says $(cat self.out)"
[ "$(cat runs.log)" = "$(printf 'run 0 job %s\nrun 1 job %s' "$self" "$self")" ] || fail "runs: $(cat runs.log)"

# ---- node updates: states, weight, features, comment ----
scontrol update NodeName=node4 Weight=7 Features=a100,bigmem Comment="new dimms" || fail "update node keys"
scontrol show node node4 > "$state/node4.txt"
grep -q " Weight=7 " "$state/node4.txt" || fail "Weight: $(cat "$state/node4.txt")"
grep -qx "   AvailableFeatures=a100,bigmem" "$state/node4.txt" || fail "features: $(cat "$state/node4.txt")"
grep -qx "   Comment=new dimms" "$state/node4.txt" || fail "comment: $(cat "$state/node4.txt")"
[ "$(sinfo -h -n node4 -o '%f %w')" = "a100,bigmem 7" ] || fail "sinfo: $(sinfo -h -n node4 -o '%f %w')"
big=$(sbatch --parsable -C bigmem -o big.out --wrap "hostname")
wait_for "$big" JobState COMPLETED
[ "$(field "$big" NodeList)" = node4 ] || fail "-C bigmem ran on $(field "$big" NodeList)"
scontrol update NodeName=node4 ActiveFeatures=nvme 2> "$state/err.txt" && fail "active features outside the available ones"
grep -qx "slurm_update error: Active features not subset of available features" "$state/err.txt" ||
  fail "ActiveFeatures: $(cat "$state/err.txt")"
scontrol update NodeName=node4 State=FAIL Reason="bad dimm" || fail "State=FAIL"
scontrol show node node4 | grep -q "^   State=IDLE+DRAIN+FAIL " || fail "FAIL: $(scontrol show node node4)"
[ "$(sinfo -h -n node4 -o %t)" = fail ] || fail "sinfo FAIL: $(sinfo -h -n node4 -o %t)"
scontrol update NodeName=node4 State=POWER_UP 2> "$state/err.txt" && fail "POWER_UP accepted"
grep -q "Drover has no power saving" "$state/err.txt" || fail "POWER_UP: $(cat "$state/err.txt")"
scontrol update NodeName=node4 State=RESUME || fail "resume node4"
scontrol show node node4 | grep -q "^   State=IDLE " || fail "node4 after resume: $(scontrol show node node4)"

# ---- node drain and resume ----
scontrol update NodeName=node3 State=DRAIN Reason="scontrol test" || fail "drain"
scontrol show node node3 | check_golden scontrol_demo_node_drained.txt
scontrol update NodeName=node3 State=RESUME || fail "resume node"
scontrol show node node3 | grep -q "^   State=IDLE " || fail "node3 not IDLE after resume"
scontrol update NodeName=node3 State=DRAIN 2> "$state/err.txt" && fail "drain without a reason"
grep -q "reason" "$state/err.txt" || fail "drain without reason: $(cat "$state/err.txt")"

# ---- reboot: refused without RebootProgram; node3's agent runs it and comes back IDLE ----
scontrol reboot node3 2> "$state/err.txt" && fail "reboot without RebootProgram"
grep -qx "scontrol_reboot_nodes error: RebootProgram isn't defined" "$state/err.txt" ||
  fail "reboot without RebootProgram: $(cat "$state/err.txt")"
printf '#!/bin/sh\necho rebooted >> %s/reboots.log\n' "$state" > "$state/reboot.sh"
chmod +x "$state/reboot.sh"
cp "$DROVER_CONF" "$state/slurm.conf.noreboot"
echo "RebootProgram=$state/reboot.sh" >> "$DROVER_CONF"
scontrol reconfigure || fail "reconfigure with RebootProgram"
scontrol reboot nextstate=RESUME reason="new kernel" node3 || fail "reboot node3"
node_state() { scontrol show node "$1" | sed -n 's/^   State=\([^ ]*\) .*/\1/p'; }
for _ in $(seq 1 150); do
  [ -s "$state/reboots.log" ] && [ "$(node_state node3)" = IDLE ] && break
  sleep 0.2
done
[ "$(cat "$state/reboots.log")" = rebooted ] || fail "RebootProgram did not run once"
[ "$(node_state node3)" = IDLE ] || fail "node3 after its reboot: $(scontrol show node node3)"
scontrol show node node3 | grep -q "^   Reason=" && fail "the reboot's reason stayed: $(scontrol show node node3)"
# ASAP on a busy node: drained, pending until its job ends; cancel_reboot takes it back.
busy=$(sbatch --parsable -w node4 -o busy.out --wrap "sleep 300")
wait_for "$busy" JobState RUNNING
scontrol reboot ASAP node4 || fail "reboot ASAP node4"
[[ "$(node_state node4)" =~ ^(MIXED|ALLOCATED)\+DRAIN\+REBOOT_REQUESTED$ ]] ||
  fail "ASAP: $(scontrol show node node4)"
scontrol show node node4 | grep -q "^   Reason=Reboot ASAP " || fail "ASAP reason: $(scontrol show node node4)"
[[ "$(sinfo -h -n node4 -o %t)" =~ ^(drng|drain)@$ ]] || fail "sinfo: $(sinfo -h -n node4 -o %t)"
scontrol cancel_reboot node4 || fail "cancel_reboot"
[[ "$(node_state node4)" =~ ^(MIXED|ALLOCATED)$ ]] || fail "cancelled: $(scontrol show node node4)"
scontrol reboot node4 || fail "reboot node4"
scontrol update NodeName=node4 State=CANCEL_REBOOT || fail "State=CANCEL_REBOOT"
[[ "$(node_state node4)" =~ ^(MIXED|ALLOCATED)$ ]] || fail "State=CANCEL_REBOOT: $(scontrol show node node4)"
scancel "$busy"
wait_for "$busy" JobState CANCELLED
cp "$state/slurm.conf.noreboot" "$DROVER_CONF"
scontrol reconfigure || fail "reconfigure without RebootProgram"

# ---- reservations ----
[ "$(scontrol show reservation)" = "No reservations in the system" ] || fail "reservations at start"
out=$(scontrol create reservation ReservationName=maint StartTime=now+1hour Duration=1:00:00 \
  Nodes=node4 Users="$(id -un)" Flags=MAINT) || fail "create reservation: $out"
[ "$out" = "Reservation created: maint" ] || fail "create reservation said: $out"
scontrol show reservation maint | check_golden scontrol_demo_reservation.txt
scontrol update ReservationName=maint Duration=120 > /dev/null || fail "update reservation"
scontrol -o show reservation | grep -q " Duration=02:00:00 " || fail "updated duration: $(scontrol -o show reservation)"
scontrol delete ReservationName=maint || fail "delete reservation"
scontrol show reservation maint > /dev/null 2> "$state/err.txt" && fail "a deleted reservation is shown"
grep -qx "Reservation maint not found" "$state/err.txt" || fail "deleted reservation: $(cat "$state/err.txt")"

# ---- top: the listed job goes ahead of its owner's other jobs, even where priorities tie ----
first=$(sbatch --parsable -J first --begin=now+1hour --wrap true)
second=$(sbatch --parsable -J second --begin=now+1hour --wrap true)
third=$(sbatch --parsable -J third --begin=now+1hour --wrap true)
wait_for "$third" Reason BeginTime
scontrol top "$third,$second" || fail "top"
# Tied priorities: the jobs behind give way (their nice grows), the listed ones keep theirs.
[ "$(field "$first" Nice)" -gt 0 ] || fail "top: the first job's Nice is $(field "$first" Nice)"
for _ in $(seq 1 100); do  # the next cycle's priorities
  [ "$(field "$third" Priority)" -gt "$(field "$second" Priority)" ] &&
    [ "$(field "$second" Priority)" -gt "$(field "$first" Priority)" ] && break
  sleep 0.2
done
[ "$(field "$third" Priority)" -gt "$(field "$second" Priority)" ] &&
  [ "$(field "$second" Priority)" -gt "$(field "$first" Priority)" ] ||
  fail "top: priorities $(field "$first" Priority) $(field "$second" Priority) $(field "$third" Priority)"
scontrol top 999999 2> "$state/err.txt" && fail "top of an unknown job succeeded"
grep -qx "slurm_top_job error: Invalid job id specified" "$state/err.txt" || fail "top unknown: $(cat "$state/err.txt")"
scancel "$first" "$second" "$third"

# ---- partitions: scontrol create, update and delete (reconfigure drops the changes) ----
scontrol update PartitionName=preempt MaxTime=45 PriorityTier=3 || fail "update partition"
scontrol show partition preempt | grep -q "^   MaxNodes=UNLIMITED MaxTime=00:45:00 " ||
  fail "updated partition: $(scontrol show partition preempt)"
scontrol update PartitionName=preempt State=DRAIN || fail "drain partition"
sbatch -p preempt --wrap true 2> "$state/err.txt" && fail "a drained partition took a job"
grep -q "Required partition not available (inactive or drain)" "$state/err.txt" || fail "drained: $(cat "$state/err.txt")"
scontrol update PartitionName=preempt State=UP || fail "partition up"
scontrol update PartitionName=preempt Bogus=1 2> "$state/err.txt" && fail "an unknown partition key"
grep -qx "Update of this parameter is not supported: Bogus=1" "$state/err.txt" || fail "Bogus: $(cat "$state/err.txt")"
scontrol update PartitionName=nope MaxTime=5 2> "$state/err.txt" && fail "update of an unknown partition"
grep -qx "slurm_update error: Invalid partition name specified" "$state/err.txt" || fail "nope: $(cat "$state/err.txt")"
scontrol create PartitionName=spare Nodes=node4 MaxTime=5 || fail "create partition"
scontrol show partition spare | grep -q "^   Nodes=node4$" || fail "created: $(scontrol show partition spare)"
scontrol create PartitionName=spare Nodes=node3 2> "$state/err.txt" && fail "created twice"
grep -qx "Error creating the partition: Invalid partition name specified" "$state/err.txt" || fail "twice: $(cat "$state/err.txt")"
# write config: what the controller runs now (the created partition, preempt's new MaxTime) as
# a slurm.conf beside the cluster's, named FILE.TIME, that loads again.
scontrol write config "$state/cluster/written.conf" > "$state/write.txt" || fail "write config: $(cat "$state/write.txt")"
written=$(sed -n 's/^Slurm config saved to //p' "$state/write.txt")
[[ "$written" =~ ^$state/cluster/written\.conf\.[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}$ ]] && [ -f "$written" ] ||
  fail "write config said: $(cat "$state/write.txt")"
grep -q "^PartitionName=spare .*MaxTime=00:05:00 .*Nodes=node4 " "$written" || fail "write config: spare: $(grep ^Partition "$written")"
grep -q "^PartitionName=preempt .*MaxTime=00:45:00 " "$written" || fail "write config: preempt: $(grep ^Partition "$written")"
grep -q "^NodeName=node\[1-4\] .*Gres=gpu:a100:8 " "$written" || fail "write config: nodes: $(grep ^NodeName "$written")"
grep -qx "# *CONTROL *#" "$written" || fail "write config: no CONTROL header"
"$drover" config check --conf "$written" > "$state/check.txt" 2>&1 ||
  fail "the written config does not load: $(cat "$state/check.txt")"
scontrol write config "$state/no/such/dir" 2> "$state/err.txt" && fail "write config into a missing directory"
grep -q "^Could not create file $state/no/such/dir\..*: No such file or directory$" "$state/err.txt" ||
  fail "write config error: $(cat "$state/err.txt")"
scontrol delete PartitionName=spare || fail "delete partition"
scontrol show partition spare > /dev/null 2>&1 && fail "a deleted partition is shown"
scontrol delete PartitionName=spare 2> "$state/err.txt" && fail "deleted twice"
grep -qx "delete_partition spare: Invalid partition name specified" "$state/err.txt" || fail "delete: $(cat "$state/err.txt")"
scontrol reconfigure || fail "reconfigure after partition updates"
scontrol show partition preempt | grep -q "^   MaxNodes=UNLIMITED MaxTime=UNLIMITED " ||
  fail "reconfigure kept scontrol's change: $(scontrol show partition preempt)"

# ---- reconfigure: a new partition is there at once; a broken slurm.conf changes nothing ----
cp "$DROVER_CONF" "$state/slurm.conf.orig"
echo "PartitionName=debug Nodes=node[1-2] MaxTime=10 State=UP" >> "$DROVER_CONF"
scontrol reconfigure || fail "reconfigure"
scontrol show partition debug | grep -q "^   MaxNodes=UNLIMITED MaxTime=00:10:00 " ||
  fail "reconfigure: $(scontrol show partition debug)"
quick=$(sbatch --parsable -p debug -t 5 -o quick.out --wrap "echo quick") || fail "sbatch -p debug"
wait_for "$quick" JobState COMPLETED
[ "$(field "$quick" Partition)" = debug ] || fail "the job ran in $(field "$quick" Partition)"
echo "PartitionName=broken Nodes=nosuch" >> "$DROVER_CONF"
scontrol reconfigure 2> "$state/err.txt" && fail "a broken slurm.conf was taken"
grep -q "slurm.conf:[0-9]*: partition broken: node 'nosuch' is not defined" "$state/err.txt" ||
  fail "broken reconfigure: $(cat "$state/err.txt")"
sed -i 's/^ClusterName=.*/ClusterName=renamed/; /^PartitionName=broken/d' "$DROVER_CONF"
scontrol reconfigure 2> "$state/err.txt" || fail "reconfigure with a new name: $(cat "$state/err.txt")"
grep -q "ClusterName changed: restart droverctld" "$state/err.txt" || fail "name change: $(cat "$state/err.txt")"
scontrol show partition debug > /dev/null || fail "the debug partition was lost"
cp "$state/slurm.conf.orig" "$DROVER_CONF"

# ---- a partition scontrol created runs jobs, and one with jobs is in use ----
scontrol create PartitionName=extra Nodes=node[3-4] MaxTime=20 || fail "create extra"
extra=$(sbatch --parsable -p extra -t 5 -o extra.out --wrap "echo extra") || fail "sbatch -p extra"
wait_for "$extra" JobState COMPLETED
[ "$(field "$extra" Partition)" = extra ] || fail "the job ran in $(field "$extra" Partition)"
scontrol delete PartitionName=extra 2> "$state/err.txt" && fail "a partition with jobs was deleted"
grep -qx "delete_partition extra: Partition is in use" "$state/err.txt" || fail "in use: $(cat "$state/err.txt")"

# ---- setdebug, setdebugflags, schedloglevel: the controller's log ----
ctld_log="$state/cluster/logs/ctld.log"
scontrol setdebug debug2 || fail "setdebug debug2"
grep -q "droverctld: Set debug level to 'debug2'" "$ctld_log" || fail "no level change in the log"
marker=$(wc -l < "$ctld_log")
scontrol show partition debug > /dev/null || fail "show partition at debug2"
tail -n +"$((marker + 1))" "$ctld_log" | grep -q "droverctld: debug2: Processing RPC: ListPartitions from UID=$(id -u)" ||
  fail "no debug2 line for ListPartitions: $(tail -5 "$ctld_log")"
scontrol setdebug info || fail "setdebug info"
marker=$(wc -l < "$ctld_log")
scontrol show partition debug > /dev/null || fail "show partition at info"
tail -n +"$((marker + 1))" "$ctld_log" | grep -q "debug2: Processing RPC: ListPartitions" &&
  fail "debug2 lines at level info"
since() { tail -n +"$((marker + 1))" "$ctld_log"; }  # the log's lines after the marker
marker=$(wc -l < "$ctld_log")
scontrol setdebug 6 || fail "setdebug 6"
since | grep -q "Set debug level to 'debug2'" || fail "setdebug 6 is not debug2"
scontrol setdebug 3 || fail "setdebug 3"
scontrol setdebug loud 2> "$state/err.txt" && fail "setdebug loud accepted"
grep -qx "invalid debug level: loud" "$state/err.txt" || fail "setdebug loud: $(cat "$state/err.txt")"
scontrol setdebug 2> "$state/err.txt" && fail "setdebug without a level accepted"
grep -qx "too few arguments for keyword:setdebug" "$state/err.txt" || fail "setdebug: $(cat "$state/err.txt")"
# TraceJobs: a job's start, with its node, at level info.
scontrol setdebugflags +TraceJobs || fail "setdebugflags +TraceJobs"
grep -q "droverctld: Set DebugFlags to TraceJobs" "$ctld_log" || fail "no DebugFlags change in the log"
traced=$(sbatch --parsable -t 5 -o /dev/null --wrap "true") || fail "sbatch for TraceJobs"
wait_for "$traced" JobState COMPLETED
grep -q "droverctld: TraceJobs: JobId=$traced started on node" "$ctld_log" || fail "no TraceJobs line"
marker=$(wc -l < "$ctld_log")
# "--": otherwise the option parser takes -TraceJobs for options, as getopt does in Slurm.
scontrol setdebugflags -- -TraceJobs || fail "setdebugflags -TraceJobs"
since | grep -q "Set DebugFlags to none" || fail "TraceJobs not removed"
scontrol setdebugflags +Backfill 2> "$state/err.txt" && fail "+Backfill accepted"
grep -qx "invalid debug flag: +Backfill" "$state/err.txt" || fail "+Backfill: $(cat "$state/err.txt")"
scontrol setdebugflags TraceJobs 2> "$state/err.txt" && fail "a flag without + or - accepted"
[ "$(cat "$state/err.txt")" = $'invalid debug flag: TraceJobs\nUsage: setdebugflags [+|-]NAME' ] ||
  fail "unsigned flag: $(cat "$state/err.txt")"
# Without SlurmSchedLogFile, as in Slurm, there is no scheduler log to enable.
scontrol schedloglevel enable 2> "$state/err.txt" && fail "schedloglevel without a log file"
grep -qx "slurm_set_schedlog_level error: Requested operation is presently disabled" "$state/err.txt" ||
  fail "schedloglevel: $(cat "$state/err.txt")"
scontrol schedloglevel 2 2> "$state/err.txt" && fail "schedloglevel 2 accepted"
grep -qx "invalid schedlog level: 2" "$state/err.txt" || fail "schedloglevel 2: $(cat "$state/err.txt")"

# ---- what Drover does not do says so ----
scontrol --version | grep -q "^slurm 22.05.8 (drover " || fail "--version: $(scontrol --version)"
scontrol --help | grep -q "^Usage: scontrol" || fail "--help"
scontrol --bogus 2> "$state/err.txt" && fail "--bogus accepted"
grep -q "unrecognized option '--bogus'" "$state/err.txt" || fail "--bogus: $(cat "$state/err.txt")"
# sdiag: Slurm's layout, the controller's counts, the RPCs by method and user; -r resets them.
sdiag > "$state/sdiag.txt" || fail "sdiag: $(cat "$state/sdiag.txt")"
for line in "^sdiag output at " "^Server thread count: " "^Jobs submitted: [1-9]" \
  "^Main schedule statistics (microseconds):" "^	Total cycles: [1-9]" \
  "^Remote Procedure Call statistics by message type" "^	Submit  *( *[0-9]*) count:[1-9]" \
  "^Remote Procedure Call statistics by user" "^	$(id -un)  *( *$(id -u)) count:[1-9]"; do
  grep -q "$line" "$state/sdiag.txt" || fail "sdiag lacks '$line': $(cat "$state/sdiag.txt")"
done
sdiag --json | python3 -c 'import json,sys; d=json.load(sys.stdin)["statistics"]; assert d["jobs_submitted"] > 0 and d["rpcs_by_message_type"], d' ||
  fail "sdiag --json"
[ "$(sdiag -r)" = "Reset scheduling statistics" ] || fail "sdiag -r"
sdiag -i | grep -q "^	Submit " && fail "sdiag -r left the Submit count"
sdiag --bogus 2>/dev/null && fail "sdiag took --bogus"
echo "PASS"
