// droverd's command line: its options as GNU getopt_long reads them (common/getopt.h), with
// droverd's own usage text and its own words for a mistake. Reads nothing but its arguments.
#pragma once

#include <string>
#include <vector>

namespace drover::agent {

struct DaemonOptions {
  std::string node, conf, spool, listen, port_file, controller, stepd;
  std::string nvml;  // --nvml: the NVML library to load (also for an emulated node)
  // --metrics-listen, --metrics-port-file: the /metrics HTTP port (node_metrics.h).
  std::string metrics_listen, metrics_port_file;
  bool emulate = false;
};

// Parses `args` (without the program's name). --help prints the usage on stdout and exits 0; a
// mistake prints "droverd: unknown option X" or "droverd: X needs a value" and the usage on
// stderr, and false is returned (droverd exits 2). The first of them in the arguments wins.
bool ParseDaemonOptions(const std::vector<std::string>& args, DaemonOptions& options);

}  // namespace drover::agent
