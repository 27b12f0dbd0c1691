#!/bin/bash
# sbcast: a file copied to every node of a running job as the job's user, in pieces, with its
# mode (and, with -p, its times); an existing copy is refused without -f; --send-libs copies the
# program's libraries; the errors read as Slurm's. Emulated nodes share this host's files, so the
# two-node copies go to one path with -f.
set -euo pipefail
drover="$1"
root_dir="$2"
source "$(dirname "$0")/cluster.sh"
start_cluster sbcast --conf "$root_dir/examples/demo/slurm.conf"
cd "$state/work"
head -c 3000000 /dev/urandom > data.bin
chmod 751 data.bin
touch -d '2020-01-02 03:04:05' data.bin
want=$(md5sum < data.bin)
dest="$state/work/copy.bin"
cat > two.sh <<SCRIPT
#!/bin/bash
sbcast -f -p -s 256k -F 1 data.bin $dest || exit 7
srun -N2 bash -c 'echo "\$SLURMD_NODENAME \$(md5sum < $dest) \$(stat -c "%a %Y" $dest)"'
SCRIPT
out=$(salloc -Q -N2 bash two.sh 2>&1) || fail "two nodes: $out"
mtime=$(stat -c %Y data.bin)
for node in node1 node2; do
  grep -qx "$node $want 751 $mtime" <<<"$out" || fail "$node's copy: $out"
done

# One node: a copy that exists is refused without -f, replaced with it (-C: compressed on the
# wire, the same copy).
rm -f "$dest"
cat > one.sh <<SCRIPT
#!/bin/bash
sbcast data.bin $dest || exit 7
sbcast data.bin $dest 2>err.txt && exit 8
sbcast -f -C data.bin $dest || exit 9
sbcast --send-libs=yes --exclude=NONE /bin/ls $state/work/ls.copy || exit 10
exit 0
SCRIPT
out=$(salloc -Q -N1 bash one.sh 2>&1) || fail "one node (exit $?): $out $(cat err.txt 2>/dev/null)"
grep -q "sbcast: error: REQUEST_FILE_BCAST(node1): .*copy.bin: File exists" err.txt ||
  fail "an existing copy: $(cat err.txt)"
[ "$(md5sum < "$dest")" = "$want" ] || fail "the -f -C copy differs"
[ -x ls.copy ] && ls ls.copy_libs/ | grep -q '^libc.so' || fail "--send-libs: $(ls -la ls.copy* 2>&1)"

# Errors.
sbcast data.bin /tmp/x 2>err.txt && fail "sbcast outside a job ran"
grep -q "Need a job id, run under salloc or specify --jobid" err.txt || fail "no job: $(cat err.txt)"
sbcast -j 999999 data.bin /tmp/x 2>err.txt && fail "sbcast to no job ran"
grep -q "Invalid job id 999999" err.txt || fail "bad job: $(cat err.txt)"
sbcast -j 1 missing.bin /tmp/x 2>err.txt && fail "sbcast of a missing file ran"
grep -q "Can't open \`missing.bin\`: No such file or directory" err.txt || fail "missing: $(cat err.txt)"
sbcast -s 0 -j 1 data.bin /tmp/x 2>err.txt && fail "-s 0 ran"
grep -q "Invalid size value" err.txt || fail "-s 0: $(cat err.txt)"
echo PASS
