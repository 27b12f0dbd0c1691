// sbatch's help texts; see sbatch_help.h.
#include "cli/sbatch/sbatch_help.h"

#include <fmt/format.h>

namespace drover::cli::sbatch {
namespace {

// The Slurm release whose behaviour Drover follows; `sbatch --version` names it, as tools that
// check Slurm's version parse "slurm X.Y.Z".
constexpr std::string_view kSlurmVersion = "22.05.8";

constexpr std::string_view kUsage =
    "Usage: sbatch [-N nnodes] [-n ntasks] [-c ncpus] [-p partition] [-t minutes]\n"
    "              [-J jobname] [-A account] [-q qos] [-o file] [-e file] [-i file]\n"
    "              [-D path] [--mem=MB] [--mem-per-cpu=MB] [--mem-per-gpu=MB]\n"
    "              [--gres=list] [-G [type:]n] [--gpus-per-node=n] [--gpus-per-task=n]\n"
    "              [--cpus-per-gpu=n] [--ntasks-per-node=n] [-C list] [-w hosts] [-x hosts]\n"
    "              [--exclusive] [-a indexes] [-d type:jobid] [-b time] [--hold] [--nice[=n]]\n"
    "              [--signal=[B:]num[@time]] [--requeue] [--no-requeue] [--export[=names]]\n"
    "              [--export-file=file] [--comment=text] [--reservation=name]\n"
    "              [--switches=n[@time]] [--segment=n] [--time-min=minutes] [--parsable]\n"
    "              [--test-only] [-W] [-Q] [--wrap=command] script [args...]\n";

constexpr std::string_view kHelp =
    "Usage: sbatch [OPTIONS...] script [args...]\n"
    "       sbatch [OPTIONS...] --wrap=command\n"
    "\n"
    "Options (a job's #SBATCH lines take the same; the command line overrides SBATCH_*\n"
    "variables, which override #SBATCH lines):\n"
    "  -A, --account=name          charge the job to this account\n"
    "  -a, --array=indexes         submit a job array (0-15, 1,3,5, 0-15:4, with %N limit)\n"
    "  -b, --begin=time            start no earlier than time (now+60, 16:00, 2030-01-20T12:34)\n"
    "  -c, --cpus-per-task=n       CPUs per task\n"
    "      --comment=text          a comment kept with the job\n"
    "  -C, --constraint=list       node features required\n"
    "      --cpus-per-gpu=n        CPUs per allocated GPU\n"
    "  -d, --dependency=list       start after other jobs (afterok:123, singleton, ...)\n"
    "  -D, --chdir=directory       the job's working directory\n"
    "  -e, --error=file            the batch script's standard error\n"
    "      --exclusive             do not share nodes with other jobs\n"
    "      --export=ALL|NONE|list  the variables the job gets (NAME or NAME=value, "
    "comma-separated)\n"
    "      --export-file=file      variables for the job, NAME=value separated by NUL or newline\n"
    "  -G, --gpus=[type:]n         GPUs for the whole job\n"
    "      --gpus-per-node=[type:]n  GPUs per node\n"
    "      --gpus-per-task=[type:]n  GPUs per task\n"
    "      --gres=list             generic resources per node (gpu:2, gpu:a100:2,nic:1)\n"
    "  -H, --hold                  submit the job held\n"
    "  -i, --input=file            the batch script's standard input\n"
    "  -J, --job-name=name         the job's name (default: the script's file name)\n"
    "      --mem=size              memory per node (MB, or with K, M, G, T)\n"
    "      --mem-per-cpu=size      memory per allocated CPU\n"
    "      --mem-per-gpu=size      memory per allocated GPU\n"
    "  -N, --nodes=n[-max]         number of nodes\n"
    "  -n, --ntasks=n              number of tasks\n"
    "      --nice[=n]              lower the job's priority by n (default 100)\n"
    "      --no-requeue            never requeue the job\n"
    "      --ntasks-per-node=n     tasks per node\n"
    "  -o, --output=file           the batch script's standard output (slurm-%j.out)\n"
    "  -p, --partition=names       partition(s), comma-separated\n"
    "      --parsable              print only the job id\n"
    "  -q, --qos=name              quality of service\n"
    "  -Q, --quiet                 print no informational messages\n"
    "      --requeue               allow the job to be requeued\n"
    "      --reservation=name      run in this reservation\n"
    "      --segment=n             nodes per segment (block topology)\n"
    "      --signal=[B:]sig[@sec]  signal the job sec seconds (60) before its time limit\n"
    "      --switches=n[@time]     at most n leaf switches, waiting up to time for them\n"
    "  -t, --time=time             time limit (minutes, MM:SS, HH:MM:SS, D-HH[:MM[:SS]])\n"
    "      --test-only             check the job would be accepted; submit nothing\n"
    "      --time-min=time         the least time limit the job accepts\n"
    "  -W, --wait                  wait for the job to end; exit with its exit code\n"
    "  -w, --nodelist=hosts        run on these hosts (a hostlist, or a file when it holds '/')\n"
    "      --wrap=command          submit a script that runs command with /bin/sh\n"
    "  -x, --exclude=hosts         never run on these hosts\n"
    "\n"
    "Accepted for compatibility, with no effect in Drover (a warning says so): --acctg-freq,\n"
    "--batch, --bb, --bbf, -M/--clusters, --cluster-constraint, --container, --container-id,\n"
    "--context, --contiguous, -S/--core-spec, --cores-per-socket, --cpu-freq, --deadline,\n"
    "--delay-boot, -m/--distribution, --extra, -B/--extra-node-info, --get-user-env,\n"
    "--gpu-bind, --gpu-freq, --gpus-per-socket, --gres-flags, --hint, --ignore-pbs,\n"
    "--kill-on-invalid-dep, -L/--licenses, --mail-type, --mail-user, --mcs-label, --mem-bind,\n"
    "--mincpus, --network, -k/--no-kill, --ntasks-per-core, --ntasks-per-gpu,\n"
    "--ntasks-per-socket, -O/--overcommit, -s/--oversubscribe, --prefer,\n"
    "--priority, --profile, --propagate, --reboot, --sockets-per-node, --spread-job, --stepmgr,\n"
    "--thread-spec, --threads-per-core, --tmp, --tres-bind, --tres-per-task, --use-min-nodes,\n"
    "-v/--verbose, --wait-all-nodes, --wckey; --uid and --gid (root only).\n"
    "\n"
    "Help options:\n"
    "  -h, --help                  show this help message\n"
    "      --usage                 display brief usage message\n"
    "  -V, --version               output version information and exit\n";

}  // namespace

std::optional<std::string> EarlyOutput(std::string_view option) {
  if (option == "help") return std::string(kHelp);
  if (option == "usage") return std::string(kUsage);
  if (option == "version") return fmt::format("slurm {}\n", kSlurmVersion);
  return std::nullopt;
}

}  // namespace drover::cli::sbatch
