// The commands of the `drover` multi-call binary. Each takes its arguments (without the
// command's own name) and returns the process exit code; main.cc dispatches by name.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/getopt.h"

namespace drover::cli {

using Arguments = std::span<char* const>;

struct Command {
  std::string_view name;     // "config" (as `drover config`) or "sbatch" (as a symlink)
  std::string_view summary;  // one line for `drover help`
  int (*run)(Arguments args);
};

int RunConfig(Arguments args);
int RunVersion(Arguments args);
int RunSim(Arguments args);    // drover/sim_launcher.cc: runs drover-sim (src/sim/main.cc)
int RunRestd(Arguments args);  // drover/sim_launcher.cc: runs drover-restd (restd/rest_api.h)
// A local cluster (drover/local_cluster.cc; built with the daemons).
int RunUp(Arguments args);
int RunDown(Arguments args);
int RunStatus(Arguments args);
int RunEnv(Arguments args);
// auth/slurm's key and broker (drover/auth_commands.cc; built with the daemons).
int RunKeygen(Arguments args);
int RunAuthd(Arguments args);
int RunStorage(Arguments args);   // drover/storage_command.cc: drover storage migrate
int RunSbatch(Arguments args);    // sbatch/sbatch.cc
int RunSqueue(Arguments args);    // query/squeue.cc
int RunSinfo(Arguments args);     // query/sinfo.cc
int RunSacct(Arguments args);     // query/sacct.cc
int RunScancel(Arguments args);   // query/scancel.cc
int RunSprio(Arguments args);     // priority/sprio.cc
int RunSshare(Arguments args);    // priority/sshare.cc
int RunScontrol(Arguments args);  // scontrol/scontrol.cc
int RunSacctmgr(Arguments args);  // accounting/sacctmgr.cc
int RunSreport(Arguments args);   // query/sreport.cc
int RunSdiag(Arguments args);     // query/sdiag.cc
int RunSstat(Arguments args);     // query/sstat.cc
int RunSbcast(Arguments args);    // srun/sbcast.cc
int RunSattach(Arguments args);   // srun/sattach.cc
// --version of the Slurm-named commands: "slurm 22.05.8 (drover X.Y.Z)" (drover/version.cc).
std::string SlurmVersionLine();
int PrintSlurmVersion();
int RunSrun(Arguments args);    // srun/srun.cc
int RunSalloc(Arguments args);  // srun/salloc.cc

// Each Slurm-named command's option table, as its parser uses it: what `drover options COMMAND`
// prints and the option-coverage test (tests/cli/option_coverage_test.py) checks against
// src/cli/coverage/COMMAND.tsv.
std::vector<OptionSpec> SbatchOptionTable();    // sbatch/sbatch.cc
std::vector<OptionSpec> SrunOptionTable();      // srun/srun.cc
std::vector<OptionSpec> SallocOptionTable();    // srun/salloc.cc
std::vector<OptionSpec> SqueueOptionTable();    // query/squeue.cc
std::vector<OptionSpec> SinfoOptionTable();     // query/sinfo.cc
std::vector<OptionSpec> SacctOptionTable();     // query/sacct.cc
std::vector<OptionSpec> ScancelOptionTable();   // query/scancel.cc
std::vector<OptionSpec> SprioOptionTable();     // priority/sprio.cc
std::vector<OptionSpec> SshareOptionTable();    // priority/sshare.cc
std::vector<OptionSpec> ScontrolOptionTable();  // scontrol/scontrol.cc
std::vector<OptionSpec> SacctmgrOptionTable();  // accounting/sacctmgr.cc
std::vector<OptionSpec> SreportOptionTable();   // query/sreport.cc
std::vector<OptionSpec> SdiagOptionTable();     // query/sdiag.cc
std::vector<OptionSpec> SstatOptionTable();     // query/sstat.cc
std::vector<OptionSpec> SbcastOptionTable();    // srun/sbcast.cc
std::vector<OptionSpec> SattachOptionTable();   // srun/sattach.cc
int RunOptions(Arguments args);                 // drover/option_tables.cc

// --help, --usage and --version (-V) of the query commands (drover/version.cc): prints `help`,
// `usage` or the version when `parsed` holds one of them and returns the exit code (0).
std::optional<int> HelpUsageVersion(const ParsedOptions& parsed, std::string_view help,
                                    std::string_view usage);

}  // namespace drover::cli
