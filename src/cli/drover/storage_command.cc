// `drover storage migrate`: copies a SQLite state into the PostgreSQL database slurm.conf names.
// The copy is the controller's own code (the commands link none of it): this runs droverctld
// --migrate-from, found beside this program (a build's bin/) or in /usr/sbin (the packages).
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "common/cluster_config.h"
#include "common/getopt.h"

namespace drover::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kUsage =
    "Usage: drover storage migrate [--conf FILE] [--from DIR]\n"
    "Copies the controller's SQLite state (drover.db in DIR, default StateSaveLocation) into\n"
    "the PostgreSQL database slurm.conf names (StorageType=postgresql, StorageHost, ...),\n"
    "which must hold no state yet. Stop droverctld first; start it on PostgreSQL after.\n";

constexpr OptionSpec kOptions[] = {
    {'h', "help", OptionSpec::kNone},
    {'f', "conf", OptionSpec::kRequired},
    {0, "from", OptionSpec::kRequired},
};

}  // namespace

int RunStorage(Arguments args) {
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kOptions);
  if (!parsed) {
    fmt::print(stderr, "drover storage: error: {}\n{}", parsed.error(), kUsage);
    return 2;
  }
  if (parsed->Has("help")) {
    fmt::print("{}", kUsage);
    return 0;
  }
  if (parsed->operands.size() != 1 || parsed->operands[0] != "migrate") {
    fmt::print(stderr, "drover storage: error: {}\n{}",
               parsed->operands.empty() ? std::string("which? migrate is the one verb")
                                        : "unknown verb '" + parsed->operands[0] + "'",
               kUsage);
    return 2;
  }
  const std::string conf = ResolveConfPath(parsed->Last("conf").value_or(""));
  std::string from = parsed->Last("from").value_or("");
  if (from.empty()) {
    ConfigLoad load = LoadClusterConfig(conf);
    if (!load.ok()) {
      fmt::print(stderr, "drover storage: error: cannot use {}:\n{}", conf, load.ErrorText());
      return 1;
    }
    from = load.config.settings.state_save_location;
  }
  std::error_code error;
  fs::path self = fs::read_symlink("/proc/self/exe", error);
  fs::path ctld = self.parent_path() / "droverctld";
  if (error || !fs::exists(ctld)) ctld = "/usr/sbin/droverctld";
  if (!fs::exists(ctld)) {
    fmt::print(stderr,
               "drover storage: error: droverctld is not beside {} nor in /usr/sbin: run this "
               "on a head node (package drover-controller)\n",
               self.string());
    return 1;
  }
  std::vector<std::string> argv = {ctld.string(), "--conf", conf, "--migrate-from", from};
  std::vector<char*> pointers;
  for (std::string& word : argv) pointers.push_back(word.data());
  pointers.push_back(nullptr);
  ::execv(pointers[0], pointers.data());
  fmt::print(stderr, "drover storage: error: cannot run {}: {}\n", ctld.string(),
             std::strerror(errno));
  return 1;
}

}  // namespace drover::cli
