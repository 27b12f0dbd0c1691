#!/bin/bash
# sacctmgr against a real cluster (`drover up` on the demo configuration with
# AccountingStorageEnforce=associations,limits,qos; loopback, a temporary state directory,
# `drover down` stops every process it started): add, modify, delete and show of accounts,
# users, QOS, associations and clusters with Slurm 22.05's texts (golden files), -P/-p/-n,
# format=, the tree, exit codes, the question before a commit, what enforcement refuses at
# submission, a QOS limit keeping a job pending with Slurm's reason, accounting surviving a
# restart, and (as root) a user without an AdminLevel refused, then allowed as an Operator.
# Usage: sacctmgr_test.sh DROVER GOLDEN_DIR [--regenerate]
set -euo pipefail
drover="$1"
golden="$(cd "$2" && pwd)"
regenerate="${3:-}"
source "$(dirname "$0")/cluster.sh"
conf="$(mktemp -d /tmp/drover_sacctmgr_conf_XXXXXX)"
created=()
on_exit() {
  for user in "${created[@]}"; do userdel -r "$user" >/dev/null 2>&1 || true; done
  rm -rf "$conf"
  cleanup_cluster
}
cp "$(dirname "$0")"/../../examples/demo/*.conf "$conf/"
echo "AccountingStorageEnforce=associations,limits,qos" >>"$conf/slurm.conf"
start_cluster sacctmgr --conf "$conf/slurm.conf"
trap on_exit EXIT
cd "$state/work"
me="$(id -un)"
port="$(sed -n 's/^SlurmctldPort=//p' "$DROVER_CONF" | head -1)"

# The golden parts name a user of their own (alice), so they read the same whoever runs them.
mask() { sed -E -e "s/ +$port / PORT /"; }
check_golden() {  # NAME: stdin, masked, against GOLDEN_DIR/NAME
  mask >"$state/$1"
  if [ "$regenerate" = --regenerate ]; then cp "$state/$1" "$golden/$1"; return; fi
  diff -u "$golden/$1" "$state/$1" >&2 || fail "$1 differs from the golden file"
}
expect_code() {  # CODE COMMAND...: runs it, output to $state/out.txt
  local want="$1" code=0
  shift
  "$@" >"$state/out.txt" 2>&1 || code=$?
  [ "$code" = "$want" ] || fail "$* exited $code, not $want: $(cat "$state/out.txt")"
}

# A new cluster's accounting, as Slurm's database starts: root, its user root, QOS normal.
sacctmgr show assoc format=cluster,account,user,share,qos,defaultqos | check_golden sacctmgr_initial.txt

# Adding: Slurm's texts; the question before committing, answered no and then yes.
{
  sacctmgr -i add account science Description="Science Dept" Organization=uni
  sacctmgr -i add account physics,chemistry parent=science fairshare=40 GrpTRES=gres/gpu=8
  sacctmgr -i add qos scavenger priority=0 preemptmode=requeue
  sacctmgr -i add qos urgent priority=1000 preempt=scavenger GraceTime=120 MaxTRESPerUser=gres/gpu=2
  sacctmgr -i add user alice account=physics
  sacctmgr -i modify user where name=alice account=physics set maxjobs=5 qos=normal,urgent
  sacctmgr -i modify account chemistry set description=labs
} | check_golden sacctmgr_changes.txt
echo n | sacctmgr add account biology >"$state/no.txt"
grep -q "^ Changes Discarded$" "$state/no.txt" || fail "answering n: $(cat "$state/no.txt")"
grep -q "Would you like to commit changes? (You have 30 seconds to decide)" "$state/no.txt" ||
  fail "no question: $(cat "$state/no.txt")"
[ -z "$(sacctmgr -n show account biology)" ] || fail "biology was added after answering n"
echo y | sacctmgr add account biology >/dev/null
[ -n "$(sacctmgr -n show account biology)" ] || fail "biology was not added after answering y"

# Exit codes and errors as sacctmgr's.
expect_code 1 sacctmgr -i add account physics
grep -qx " Nothing new added." "$state/out.txt" || fail "re-add: $(cat "$state/out.txt")"
expect_code 1 sacctmgr -i add user nobody_here account=nowhere
grep -q "This account 'nowhere' doesn't exist." "$state/out.txt" || fail "$(cat "$state/out.txt")"
expect_code 1 sacctmgr -i add account chem colour=blue
grep -q "Unknown option: colour=blue" "$state/out.txt" || fail "$(cat "$state/out.txt")"
expect_code 1 sacctmgr -i delete account root
grep -q "You are not allowed to remove the root account." "$state/out.txt" || fail "$(cat "$state/out.txt")"
expect_code 1 sacctmgr show assoc format=nosuchfield
grep -q "Unknown field 'nosuchfield'" "$state/out.txt" || fail "$(cat "$state/out.txt")"
expect_code 1 sacctmgr -r add account x
grep -q "Can't run this command in readonly mode." "$state/out.txt" || fail "$(cat "$state/out.txt")"
expect_code 1 sacctmgr frobnicate
grep -q "invalid keyword: frobnicate" "$state/out.txt" || fail "$(cat "$state/out.txt")"

# Listings: the default tables, -P, -p, -n, format= widths, the tree and where.
{
  sacctmgr show account
  sacctmgr show user
  sacctmgr show qos
  sacctmgr show assoc
  sacctmgr show assoc tree format=cluster,account%-14,user,share,maxjobs,grptres,qos
  sacctmgr -P show user withassoc format=user,account,maxjobs,qos
  sacctmgr -p -n show qos format=name,priority,preempt,maxtrespu
  sacctmgr show cluster
  sacctmgr show assoc where account=physics format=account,user,share
} | check_golden sacctmgr_show.txt

# Enforcement at submission: no association, a QOS the association does not have.
expect_code 1 sbatch -A physics --wrap=true
grep -q "Invalid account or account/partition combination specified" "$state/out.txt" ||
  fail "physics before $me was added: $(cat "$state/out.txt")"
sacctmgr -i add user "$me" account=physics >/dev/null || true  # root exists already: exit 1
sacctmgr -i modify user where name="$me" account=physics set qos=normal,urgent >/dev/null
expect_code 1 sbatch -A chemistry --wrap=true
grep -q "Invalid account or account/partition combination specified" "$state/out.txt" ||
  fail "chemistry: $(cat "$state/out.txt")"
expect_code 1 sbatch -A physics --qos=scavenger --wrap=true
grep -q "Invalid qos specification" "$state/out.txt" || fail "scavenger: $(cat "$state/out.txt")"
sbatch -A physics --qos=urgent --wrap=true >/dev/null || fail "urgent was refused"

# A QOS limit keeps a job pending with Slurm's reason: MaxTRESPerUser=gres/gpu=2.
first=$(sbatch --parsable -A physics --qos=urgent --gpus=2 --wrap="sleep 60")
second=$(sbatch --parsable -A physics --qos=urgent --gpus=1 --wrap="sleep 60")
for _ in $(seq 1 100); do
  reason=$(squeue -h -j "$second" -o %r)
  [ "$reason" = QOSMaxGRESPerUser ] && break
  sleep 0.2
done
[ "$reason" = QOSMaxGRESPerUser ] || fail "second job's reason: $reason"
[ "$(squeue -h -j "$first" -o %T)" = RUNNING ] || fail "first job is not running"
# Raising the limit lets it start within a cycle, without a restart.
sacctmgr -i modify qos urgent set MaxTRESPerUser=gres/gpu=4 >/dev/null
for _ in $(seq 1 100); do
  [ "$(squeue -h -j "$second" -o %T)" = RUNNING ] && break
  sleep 0.2
done
[ "$(squeue -h -j "$second" -o %T)" = RUNNING ] || fail "the raised limit did not start $second"
scancel "$first" "$second"

# Accounting survives a restart of the cluster.
"$drover" down --state "$state/cluster" >/dev/null
"$drover" up --state "$state/cluster" --conf "$conf/slurm.conf" >"$state/up2.txt" 2>&1 ||
  fail "drover up again: $(cat "$state/up2.txt")"
export DROVER_CONF="$state/cluster/slurm.conf"
sacctmgr -n -P show assoc format=account,user,share,maxjobs where account=physics >"$state/after.txt"
grep -qx "physics||40|" "$state/after.txt" || fail "after restart: $(cat "$state/after.txt")"
grep -qx "physics|alice|1|5" "$state/after.txt" || fail "after restart: $(cat "$state/after.txt")"

# Deleting.
{
  sacctmgr -i delete user where name=alice account=physics
  sacctmgr -i delete qos scavenger
  sacctmgr -i delete account chemistry
} | check_golden sacctmgr_delete.txt

# dump and load: the cluster file, written as Slurm's, loads back to the same accounting.
cluster="$(sacctmgr -n -P show cluster format=cluster | head -1)"
(cd "$state" && sacctmgr dump "$cluster") >"$state/dump.txt"
grep -qx " No filename given, using ./$cluster.cfg." "$state/dump.txt" || fail "$(cat "$state/dump.txt")"
grep -qx "Cluster - '$cluster':DefaultQOS='normal':Fairshare=1:QOS='normal'" "$state/$cluster.cfg" ||
  fail "dump: $(cat "$state/$cluster.cfg")"
grep -qx "Account - 'physics':Description='physics':Organization='science':Fairshare=40:GrpTRES=gres/gpu=8" \
  "$state/$cluster.cfg" || fail "dump: $(cat "$state/$cluster.cfg")"
sacctmgr -i delete account physics >/dev/null
[ -z "$(sacctmgr -n show assoc where account=physics)" ] || fail "physics was not deleted"
sacctmgr -i load file="$state/$cluster.cfg" >"$state/load.txt" || fail "load: $(cat "$state/load.txt")"
grep -qx "For cluster $cluster" "$state/load.txt" || fail "load: $(cat "$state/load.txt")"
sacctmgr dump cluster="$cluster" file="$state/again.cfg" >/dev/null
cmp -s "$state/$cluster.cfg" "$state/again.cfg" ||
  fail "load did not restore the dump: $(diff "$state/$cluster.cfg" "$state/again.cfg")"
expect_code 1 sacctmgr -i load file="$state/again.cfg"
grep -qx " Nothing new added." "$state/out.txt" || fail "load again: $(cat "$state/out.txt")"
printf 'Cluster - %s\nAccount - x:Colour=blue\n' "$cluster" >"$state/bad.cfg"
expect_code 1 sacctmgr -i load "$state/bad.cfg"
grep -q "Unknown option: Colour=blue" "$state/out.txt" || fail "bad load: $(cat "$state/out.txt")"
expect_code 1 sacctmgr dump nosuchcluster
grep -qx " Cluster nosuchcluster doesn't exist." "$state/out.txt" || fail "$(cat "$state/out.txt")"

# As root: a user without an AdminLevel may not change accounting; an Operator may.
if [ "$(id -u)" = 0 ] && command -v useradd >/dev/null; then
  user="drover_acct_$$"
  useradd --create-home --shell /bin/bash "$user"
  created+=("$user")
  # The user's own copy of the command (the build tree may not be readable by them).
  chmod 755 "$state"
  mkdir -p "$state/bin"
  cp "$drover" "$state/bin/drover"
  ln -sf drover "$state/bin/sacctmgr"
  chmod -R a+rx "$state/bin"
  as_user() { su "$user" -c "PATH='$state/bin:/usr/bin:/bin' DROVER_CONF='$DROVER_CONF' $*"; }
  as_user sacctmgr -i add account forbidden >"$state/denied.txt" 2>&1 && fail "a plain user added an account"
  grep -qx " Problem adding accounts: Access/permission denied" "$state/denied.txt" ||
    fail "denied: $(cat "$state/denied.txt")"
  as_user sacctmgr -i modify qos normal set priority=5 >"$state/denied.txt" 2>&1 &&
    fail "a plain user modified a QOS"
  grep -qx " Error with request: Access/permission denied" "$state/denied.txt" ||
    fail "denied: $(cat "$state/denied.txt")"
  sacctmgr -i add user "$user" account=physics adminlevel=operator >/dev/null
  as_user sacctmgr -i add account allowed >/dev/null || fail "an Operator could not add an account"
fi
echo "sacctmgr: all checks passed"
