#!/bin/bash
# Snakemake's own SLURM executor (Debian's snakemake, `--slurm`) runs a two-rule workflow against
# a local emulated cluster: it finds the default partition with sinfo, submits with sbatch
# --wrap, follows the jobs with sacct, and each job runs its rule through `srun -n1`. The
# controller and agents are on loopback with temporary state and stopped at exit.
# Exits 77 (skipped) when snakemake is not installed (`scripts/setup --tests` installs it).
set -euo pipefail
drover="$1"
command -v snakemake >/dev/null || { echo "SKIP: snakemake is not installed (scripts/setup --tests)"; exit 77; }
source "$(dirname "$0")/cluster.sh"
on_fail() {
  [ -f "$state/work/snakemake.log" ] && tail -40 "$state/work/snakemake.log"
  for log in "$state"/work/.snakemake/slurm_logs/*/*.log; do
    [ -f "$log" ] && { echo "--- $log"; tail -20 "$log"; }
  done
}
start_cluster snakemake
export XDG_CACHE_HOME="$state/cache" HOME="${HOME:-$state}" USER="${USER:-$(id -un)}"
cd "$state/work"
# Two rules that run side by side (snakemake's SLURM executor looks at its jobs only every
# 33 s), and a local one that joins their outputs.
cat > Snakefile <<'RULES'
rule all:
    input: "b.txt"

rule hello:
    output: "hello.txt"
    shell: "echo hello from job $SLURM_JOB_ID step $SLURM_STEP_ID > {output}"

rule world:
    output: "world.txt"
    shell: "echo world > {output}"

localrules: join

rule join:
    input: "hello.txt", "world.txt"
    output: "b.txt"
    shell: "cat {input} > {output}"
RULES
timeout 240 snakemake --slurm --jobs 2 --latency-wait 5 --max-status-checks-per-second 5 \
  --default-resources runtime=10 mem_mb=1000 > snakemake.log 2>&1 || fail "snakemake failed"
grep -q "^hello from job [0-9][0-9]* step 0$" b.txt || fail "b.txt: $(cat b.txt)"
grep -qx world b.txt || fail "b.txt: $(cat b.txt)"
jobs=$(grep -o "SLURM jobid [0-9]*" snakemake.log | awk '{print $3}' | tr '\n' ',')
[ "$(echo "$jobs" | tr ',' '\n' | grep -c .)" = 2 ] || fail "expected two SLURM jobs: $jobs"
[ "$(sacct -X -n -P -j "${jobs%,}" -o State | sort -u)" = COMPLETED ] || fail "sacct: $(sacct -j "${jobs%,}")"
echo PASS
