// What sbatch's options say once each is validated (Settings), and what parsing reads from the
// caller (Inputs). Internal to sbatch's option parsing: nothing outside src/cli/sbatch includes
// it, and it holds no logic beyond de-duplicating notices.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/sbatch/sbatch_options.h"
#include "common/dependency.h"
#include "common/gres.h"
#include "common/result.h"

namespace drover::cli::sbatch {

inline constexpr std::string_view kTryHelp = "Try \"sbatch --help\" for more information";

// "sbatch: error: TEXT", the form of most of sbatch's errors.
inline Error Fail(std::string_view text) {
  return MakeError(fmt::format("sbatch: error: {}", text));
}

// Where a value came from. Later sources override earlier ones, as in Slurm.
enum class Source { kScript, kEnvironment, kCommandLine };

template <typename T>
struct Sourced {
  T value;
  Source source;
};

struct GpuCount {
  std::string type;  // empty: any type
  uint32_t count = 0;
};

struct NodeRange {
  uint32_t min = 1, max = 0;  // max 0: no maximum
};

struct SignalRequest {
  int number = 0;
  int64_t seconds = 60;
  bool batch_only = false;
};

// Every option's value once validated; each option overwrites only its own field, so the order
// script, environment, command line gives Slurm's precedence. Finish() combines them.
struct Settings {
  std::optional<std::string> name, account, qos, comment, reservation, constraint, array;
  std::optional<std::string> stdout_path, stderr_path, stdin_path, work_dir;
  std::optional<std::vector<std::string>> partitions, nodelist, exclude;
  std::optional<NodeRange> nodes;
  std::optional<uint32_t> ntasks, ntasks_per_node, switches, segment;
  std::optional<int64_t> switch_wait, time_limit, time_min, begin, deadline;
  std::optional<Sourced<uint32_t>> cpus_per_task, cpus_per_gpu;
  std::optional<Sourced<uint64_t>> mem, mem_per_cpu, mem_per_gpu;
  std::optional<GpuCount> gpus, gpus_per_node, gpus_per_task;
  std::optional<std::vector<GresSpec>> gres;
  std::optional<Sourced<bool>> exclusive;
  std::optional<Source> oversubscribe;
  std::optional<DependencySpec> dependency;
  std::optional<int32_t> nice;
  std::optional<SignalRequest> signal;
  std::optional<bool> requeue;
  std::optional<char> open_mode;  // 'a' or 't'
  std::optional<std::string> export_env, export_file, wrap;
  std::optional<std::string> clusters;  // -M: checked against the cluster's name when submitting
  // Node minimums: --mincpus, --tmp (MB), -B and its three options.
  std::optional<uint32_t> mincpus, sockets_per_node, cores_per_socket, threads_per_core;
  std::optional<uint64_t> tmp_mb;
  bool ignore_pbs = false;
  std::optional<uint32_t> priority;  // --priority (operators only); TOP is Slurm's highest
  std::optional<uint32_t> ntasks_per_gpu, gpus_per_socket;
  bool overcommit = false, contiguous = false;
  // --uid and --gid (root only): whom the job runs as; the user's name and primary group too.
  std::optional<uint32_t> run_uid, run_gid, run_uid_group;
  std::optional<std::string> run_user;
  std::optional<std::string> mcs_label;
  // Placement: --prefer, --batch, -L (checked by the controller against Licenses=), --gres-flags.
  std::optional<std::string> prefer, batch_features, licenses, gres_flags;
  bool spread_job = false;
  std::optional<std::string> propagate;     // --propagate's list as given ("": ALL)
  std::optional<std::string> get_user_env;  // --get-user-env, checked: "[timeout][S|L]"
  // Lifecycle: --kill-on-invalid-dep (1 yes, 2 no), -k/--no-kill, --mail-type as Slurm prints
  // it, --mail-user.
  std::optional<int> kill_on_invalid_dep;
  bool no_kill = false;
  std::optional<std::string> mail_type, mail_user;
  // Variables Slurm's sbatch sets for the job from options (SLURM_DISTRIBUTION, ...): the
  // job's srun reads them.
  std::map<std::string, std::string> variables;
  bool hold = false, parsable = false, test_only = false, wait = false, quiet = false;
  bool verbose = false;
  std::vector<std::string> notices;

  void Notice(std::string line) {
    if (std::find(notices.begin(), notices.end(), line) == notices.end())
      notices.push_back(std::move(line));
  }
  void NoEffect(std::string_view option) {
    Notice(fmt::format("sbatch: warning: --{} is accepted but has no effect in Drover", option));
  }
};

struct Inputs {
  const ReadFile& read_file;
  const std::map<std::string, std::string>& environment;
  const std::string& cwd;
  uint32_t uid;
  int64_t now;
};

}  // namespace drover::cli::sbatch
