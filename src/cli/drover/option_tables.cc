// `drover options COMMAND`: a Slurm-named command's option table as its parser holds it, one
// option per line ("--name<TAB>letter<TAB>none|required|optional"), sorted by name. The
// option-coverage test (tests/cli/option_coverage_test.py) compares it with
// src/cli/coverage/COMMAND.tsv, so an option cannot leave a parser unnoticed.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/commands.h"

namespace drover::cli {
namespace {

constexpr std::pair<std::string_view, std::vector<OptionSpec> (*)()> kTables[] = {
    {"sbatch", SbatchOptionTable},   {"srun", SrunOptionTable},
    {"salloc", SallocOptionTable},   {"squeue", SqueueOptionTable},
    {"sinfo", SinfoOptionTable},     {"sacct", SacctOptionTable},
    {"scancel", ScancelOptionTable}, {"sprio", SprioOptionTable},
    {"sshare", SshareOptionTable},   {"sacctmgr", SacctmgrOptionTable},
    {"sreport", SreportOptionTable}, {"scontrol", ScontrolOptionTable},
    {"sdiag", SdiagOptionTable},     {"sstat", SstatOptionTable},
    {"sbcast", SbcastOptionTable},   {"sattach", SattachOptionTable},
};

std::string_view ArgumentName(OptionSpec::Argument argument) {
  switch (argument) {
    case OptionSpec::kNone:
      return "none";
    case OptionSpec::kRequired:
      return "required";
    case OptionSpec::kOptional:
      return "optional";
  }
  return "none";
}

}  // namespace

int RunOptions(Arguments args) {
  if (args.size() != 1) {
    fmt::print(stderr, "Usage: drover options COMMAND\nCommands:");
    for (const auto& [name, table] : kTables) fmt::print(stderr, " {}", name);
    fmt::print(stderr, "\n");
    return 2;
  }
  std::string_view wanted = args[0];
  for (const auto& [name, table] : kTables) {
    if (name != wanted) continue;
    std::vector<OptionSpec> specs = table();
    std::sort(specs.begin(), specs.end(),
              [](const OptionSpec& a, const OptionSpec& b) { return a.long_name < b.long_name; });
    for (const OptionSpec& spec : specs)
      fmt::print("--{}\t{}\t{}\n", spec.long_name,
                 spec.short_name ? std::string(1, spec.short_name) : std::string("-"),
                 ArgumentName(spec.argument));
    return 0;
  }
  fmt::print(stderr, "drover: error: no option table for '{}'; run 'drover options' for the list\n",
             wanted);
  return 2;
}

}  // namespace drover::cli
