// The `drover` multi-call binary: run as `drover COMMAND ...`, or under a command's own name
// (a symlink such as `sbatch`), it dispatches to that command through one table.
#include <fmt/format.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cli/commands.h"

namespace drover::cli {
namespace {

constexpr std::array kCommands = {
    Command{"config", "check a slurm.conf (with its gres.conf and topology.conf): config check",
            RunConfig},
    Command{"version", "print Drover's version", RunVersion},
    Command{"sim", "replay a workload trace through the real scheduler: drover sim --help", RunSim},
#ifdef DROVER_WITH_DAEMONS
    Command{"up", "start a local emulated cluster (droverctld + one droverd per node)", RunUp},
    Command{"down", "stop the local cluster `drover up` started", RunDown},
    Command{"status", "show the local cluster's daemons and nodes", RunStatus},
    Command{"env", "print the shell lines that point the commands at the local cluster", RunEnv},
    Command{"keygen", "write a new auth/slurm cluster key: drover keygen --help", RunKeygen},
    Command{"authd", "serve auth/slurm credentials to this host's users (no droverd here)",
            RunAuthd},
    Command{"storage", "copy a SQLite state into PostgreSQL: drover storage migrate --help",
            RunStorage},
    Command{"restd", "serve Slurm's REST API (as slurmrestd): drover restd --help", RunRestd},
    Command{"sbatch", "submit a batch script (as Slurm's sbatch)", RunSbatch},
    Command{"srun", "run a parallel step, in an allocation or a new one (as Slurm's srun)",
            RunSrun},
    Command{"salloc", "obtain an allocation and run a command in it (as Slurm's salloc)",
            RunSalloc},
    Command{"squeue", "show the queue (as Slurm's squeue)", RunSqueue},
    Command{"sinfo", "show partitions and nodes (as Slurm's sinfo)", RunSinfo},
    Command{"sacct", "show the jobs' history (as Slurm's sacct)", RunSacct},
    Command{"scancel", "cancel or signal jobs (as Slurm's scancel)", RunScancel},
    Command{"sstat", "show what a running job's steps use (as Slurm's sstat)", RunSstat},
    Command{"sattach", "attach to a running step's output and stdin (as Slurm's sattach)",
            RunSattach},
    Command{"sbcast", "copy a file to every node of a running job (as Slurm's sbcast)", RunSbcast},
    Command{"sdiag", "show the controller's statistics (as Slurm's sdiag)", RunSdiag},
    Command{"sprio", "show pending jobs' priority factors (as Slurm's sprio)", RunSprio},
    Command{"sshare", "show the fair-share tree (as Slurm's sshare)", RunSshare},
    Command{"scontrol", "show and change jobs, nodes and reservations (as Slurm's scontrol)",
            RunScontrol},
    Command{"sacctmgr",
            "show and change accounts, users, QOS and associations (as Slurm's sacctmgr)",
            RunSacctmgr},
    Command{"sreport", "reports of the cluster's use from the job history (as Slurm's sreport)",
            RunSreport},
    Command{"options", "print a Slurm-named command's option table: drover options sbatch",
            RunOptions},
#endif
};

const Command* FindCommand(std::string_view name) {
  for (const Command& command : kCommands)
    if (command.name == name) return &command;
  return nullptr;
}

void PrintUsage(std::FILE* out) {
  fmt::print(out, "Usage: drover COMMAND [ARGS...]\n\nCommands:\n");
  for (const Command& command : kCommands)
    fmt::print(out, "  {:<10} {}\n", command.name, command.summary);
}

// A command builds the whole cluster's configuration: at 10,000 nodes of 8 GPUs that is ~30 MiB
// of small records, and half of the command's time went to the kernel faulting the heap in one
// 4 KiB page at a time. The heap is grown once by 64 MiB (virtual: only what is touched is
// resident) and marked for transparent huge pages, as glibc's glibc.malloc.hugetlb=1 tunable
// does: a few dozen faults instead of thousands. Where THP is off this changes nothing.
// The bytes free at the top of the heap.
size_t FreeTop() {
#if defined(__GLIBC_PREREQ) && __GLIBC_PREREQ(2, 33)
  return mallinfo2().keepcost;
#else
  return static_cast<size_t>(static_cast<unsigned>(mallinfo().keepcost));
#endif
}

void PrepareHeap() {
  constexpr size_t kPad = size_t{64} << 20, kHuge = size_t{2} << 20;
  mallopt(M_TOP_PAD, static_cast<int>(kPad));
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(kPad));  // big buffers from the heap too
  auto before = reinterpret_cast<uintptr_t>(sbrk(0));
  // Just more than the heap's free top (keepcost): the heap grows by kPad. The pair touches the
  // chunk's start and its end, both within the two pages past the old break: a 2 MiB range that
  // was touched before the madvise stays in 4 KiB pages, so the range starts past them.
  // Volatile, so that the compiler does not drop the malloc/free pair.
  constexpr size_t kPage = 4096;
  void* volatile grow = std::malloc(FreeTop() + kPage);
  std::free(grow);  // the heap keeps kPad at its top (M_TOP_PAD)
  auto after = reinterpret_cast<uintptr_t>(sbrk(0));
  uintptr_t from = (before + 2 * kPage + kHuge - 1) & ~(kHuge - 1), to = after & ~(kHuge - 1);
  if (before == static_cast<uintptr_t>(-1) || to <= from) return;
  madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);
  // Up to 2 MiB between the free top's start and `from` would be faulted in 4 KiB pages. A block
  // that ends two pages short of `from` is set aside, never touched but at its ends and never
  // freed (address space, not memory), so that what the command allocates next lands in huge
  // pages.
  uintptr_t top = after - FreeTop();
  if (from > top + 2 * kPage) {
    void* volatile skipped = std::malloc(from - top - 2 * kPage);
    (void)skipped;
  }
}

std::string_view BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace
}  // namespace drover::cli

int main(int argc, char** argv) {
  using namespace drover::cli;
  PrepareHeap();
  Arguments all(argv, static_cast<size_t>(argc));
  std::string_view invoked = argc > 0 ? BaseName(argv[0]) : "drover";
  if (invoked != "drover") {
    if (const Command* command = FindCommand(invoked)) return command->run(all.subspan(1));
  }
  if (argc < 2) {
    PrintUsage(stderr);
    return 2;
  }
  std::string_view name = argv[1];
  if (name == "help" || name == "--help" || name == "-h") {
    PrintUsage(stdout);
    return 0;
  }
  if (name == "--version" || name == "-V") return RunVersion(all.subspan(2));
  const Command* command = FindCommand(name);
  if (!command) {
    fmt::print(stderr, "drover: error: unknown command '{}'; run 'drover help' for the list\n",
               name);
    return 2;
  }
  return command->run(all.subspan(2));
}
