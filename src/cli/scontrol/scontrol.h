// scontrol's pieces shared by its command files: the global options, and `show`/`ping`
// (scontrol_show.cc). The dispatch and the actions (update, hold, requeue, ...) are in
// scontrol.cc.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "common/cluster_config.h"
#include "common/result.h"

namespace drover::cli::scontrol {

// The options, and the modes interactive commands (oneliner, details, all, hide, quiet,
// verbose) switch.
struct Flags {
  bool one_liner = false;  // -o
  bool details = false;    // -d
  bool json = false;       // --json
  bool all = false;        // -a: hidden partitions too (--hide: not)
  bool quiet = false;      // -Q
  int verbose = 0;         // -v
  bool exit = false;       // interactive mode: `exit` or `quit` was read
  std::string version;     // Drover's, for Version= of nodes
};

int RunShow(const Flags& flags, std::span<const std::string> words);
int RunPing(const Flags& flags);
// write config [FILE] (scontrol_show.cc).
int RunWriteConfig(const Flags& flags, const std::optional<std::string>& file);
// listpids [JOBID[.STEPID]] [NODENAME], pidinfo PID and show slurmd [NODENAME]
// (scontrol_pids.cc).
int ListPids(std::span<const std::string> words);
int PidInfo(std::span<const std::string> words);
int ShowSlurmd(const std::optional<std::string>& node);

// The cluster's configuration (DROVER_CONF, SLURM_CONF, /etc/slurm/slurm.conf), without
// connecting.
Result<ClusterConfig> LoadCluster();

}  // namespace drover::cli::scontrol
