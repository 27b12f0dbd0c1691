// droverd's options; see daemon_options.h.
#include "agent/daemon/daemon_options.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string_view>

#include "common/getopt.h"

namespace drover::agent {
namespace {

constexpr const char* kUsage =
    "Usage: droverd -N NODE [--conf FILE] [--spool DIR] [--listen ADDR:PORT] [--port-file FILE]\n"
    "               [--controller HOST:PORT] [--emulate] [--stepd PATH] [--nvml LIB]\n"
    "               [--metrics-listen ADDR:PORT] [--metrics-port-file FILE]\n"
    "  -N NODE            the node of slurm.conf this agent is; with --emulate, a hostlist\n"
    "                     (node[1-1000]) of nodes one process serves, each with its own\n"
    "                     SlurmdSpoolDir (which then needs %n)\n"
    "  --conf FILE        slurm.conf (default: $DROVER_CONF, $SLURM_CONF, /etc/slurm/slurm.conf)\n"
    "  --spool DIR        job directories (default: SlurmdSpoolDir, %n replaced by NODE)\n"
    "  --listen ADDR:PORT where to listen (default: DroverAgentListen, else every interface,\n"
    "                     with the node's Port or SlurmdPort;\n"
    "                     port 0 picks a free one, told to the controller at registration)\n"
    "  --port-file FILE   write the port listened on\n"
    "  --controller H:P   the controller (default: SlurmctldHost:SlurmctldPort)\n"
    "  --emulate          an emulated node: resources from slurm.conf, GPUs without devices,\n"
    "                     several agents per host\n"
    "  --stepd PATH       the step supervisor (default: droverstepd beside droverd)\n"
    "  --nvml LIB         the NVML library (default: libnvidia-ml.so.1); with --emulate the\n"
    "                     node's GPUs are that library's (a stand-in for tests)\n"
    "  --metrics-listen ADDR:PORT  serve Prometheus /metrics there (default: "
    "DroverAgentMetricsPort\n"
    "                     on --listen's address; none when that is 0); port 0 picks a free one\n"
    "  --metrics-port-file FILE    write the /metrics port\n";

constexpr OptionSpec kOptions[] = {
    {'N', "node", OptionSpec::kRequired},         {0, "conf", OptionSpec::kRequired},
    {0, "spool", OptionSpec::kRequired},          {0, "listen", OptionSpec::kRequired},
    {0, "port-file", OptionSpec::kRequired},      {0, "controller", OptionSpec::kRequired},
    {0, "stepd", OptionSpec::kRequired},          {0, "emulate", OptionSpec::kNone},
    {0, "nvml", OptionSpec::kRequired},           {'h', "help", OptionSpec::kNone},
    {0, "metrics-listen", OptionSpec::kRequired}, {0, "metrics-port-file", OptionSpec::kRequired},
};

[[noreturn]] void PrintUsage() {
  std::fputs(kUsage, stdout);
  std::exit(0);
}

}  // namespace

bool ParseDaemonOptions(const std::vector<std::string>& args, DaemonOptions& options) {
  OptionScan scan = ScanOptions(args, kOptions);
  std::optional<size_t> refused = FirstRefused(scan);
  for (const OptionUse& use : scan.uses) {
    // --help before a mistake wins, as it did when droverd read its arguments in order.
    if (refused && use.argument >= *refused) break;
    if (use.spec->long_name == "help") PrintUsage();
  }
  if (refused) {
    const std::string& arg = args[*refused];
    if (*refused == scan.error_argument && scan.lacks_value)
      std::fprintf(stderr, "droverd: %s needs a value\n%s", arg.c_str(), kUsage);
    else
      std::fprintf(stderr, "droverd: unknown option %s\n%s", arg.c_str(), kUsage);
    return false;
  }
  const std::map<std::string_view, std::string*> values = {
      {"node", &options.node},
      {"conf", &options.conf},
      {"spool", &options.spool},
      {"listen", &options.listen},
      {"port-file", &options.port_file},
      {"controller", &options.controller},
      {"stepd", &options.stepd},
      {"nvml", &options.nvml},
      {"metrics-listen", &options.metrics_listen},
      {"metrics-port-file", &options.metrics_port_file},
  };
  for (const OptionUse& use : scan.uses) {  // a repeated option: the last one counts
    if (use.spec->long_name == "emulate") options.emulate = true;
    if (auto value = values.find(use.spec->long_name); value != values.end())
      *value->second = *use.value;
  }
  if (options.node.empty()) {
    std::fprintf(stderr, "droverd: which node is this? give -N NODE\n%s", kUsage);
    return false;
  }
  return true;
}

}  // namespace drover::agent
