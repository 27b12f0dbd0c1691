// droverd's options; see daemon_options.h.
#include "agent/daemon/daemon_options.h"

#include <cstdio>
#include <cstdlib>
#include <span>

#include "common/getopt.h"

namespace drover::agent {
namespace {

constexpr const char* kUsage =
    "Usage: droverd -N NODE [--conf FILE] [--spool DIR] [--listen ADDR:PORT] [--port-file FILE]\n"
    "               [--controller HOST:PORT] [--emulate] [--stepd PATH]\n"
    "  -N NODE            the node of slurm.conf this agent is\n"
    "  --conf FILE        slurm.conf (default: $DROVER_CONF, $SLURM_CONF, /etc/slurm/slurm.conf)\n"
    "  --spool DIR        job directories (default: SlurmdSpoolDir, %n replaced by NODE)\n"
    "  --listen ADDR:PORT where to listen (default: 0.0.0.0:the node's Port or SlurmdPort;\n"
    "                     port 0 picks a free one, told to the controller at registration)\n"
    "  --port-file FILE   write the port listened on\n"
    "  --controller H:P   the controller (default: SlurmctldHost:SlurmctldPort)\n"
    "  --emulate          an emulated node: resources from slurm.conf, GPUs without devices,\n"
    "                     several agents per host\n"
    "  --stepd PATH       the step supervisor (default: droverstepd beside droverd)\n";

constexpr OptionSpec kOptions[] = {
    {'N', "node", OptionSpec::kRequired},    {0, "conf", OptionSpec::kRequired},
    {0, "spool", OptionSpec::kRequired},     {0, "listen", OptionSpec::kRequired},
    {0, "port-file", OptionSpec::kRequired}, {0, "controller", OptionSpec::kRequired},
    {0, "stepd", OptionSpec::kRequired},     {0, "emulate", OptionSpec::kNone},
    {'h', "help", OptionSpec::kNone},
};

Result<ParsedOptions> ParseFirst(const std::vector<std::string>& args, size_t count) {
  return ParseOptions(std::span<const std::string>(args.data(), count), kOptions);
}

[[noreturn]] void PrintUsage() {
  std::fputs(kUsage, stdout);
  std::exit(0);
}

// The first argument that is a mistake (an unknown option, one without its value, an operand):
// its index, and whether it lacks a value. None: every argument is an option.
struct Mistake {
  size_t index = 0;
  bool needs_value = false;
};
std::optional<Mistake> FirstMistake(const std::vector<std::string>& args) {
  for (size_t count = 1; count <= args.size(); ++count) {
    auto parsed = ParseFirst(args, count);
    if (parsed && parsed->operands.empty()) continue;
    // A value-taking option last in this prefix is fine if a value follows it.
    bool needs_value = !parsed && parsed.error().find("requires an argument") != std::string::npos;
    if (needs_value && count < args.size()) continue;
    return Mistake{count - 1, needs_value};
  }
  return std::nullopt;
}

}  // namespace

bool ParseDaemonOptions(const std::vector<std::string>& args, DaemonOptions& options) {
  if (std::optional<Mistake> mistake = FirstMistake(args)) {
    // --help before the mistake wins, as it did when droverd read its arguments in order.
    if (auto before = ParseFirst(args, mistake->index); before && before->Has("help")) PrintUsage();
    const std::string& arg = args[mistake->index];
    if (mistake->needs_value)
      std::fprintf(stderr, "droverd: %s needs a value\n%s", arg.c_str(), kUsage);
    else
      std::fprintf(stderr, "droverd: unknown option %s\n%s", arg.c_str(), kUsage);
    return false;
  }
  ParsedOptions parsed = *ParseFirst(args, args.size());
  if (parsed.Has("help")) PrintUsage();
  options.node = parsed.Last("node").value_or("");
  options.conf = parsed.Last("conf").value_or("");
  options.spool = parsed.Last("spool").value_or("");
  options.listen = parsed.Last("listen").value_or("");
  options.port_file = parsed.Last("port-file").value_or("");
  options.controller = parsed.Last("controller").value_or("");
  options.stepd = parsed.Last("stepd").value_or("");
  options.emulate = parsed.Has("emulate");
  if (options.node.empty()) {
    std::fprintf(stderr, "droverd: which node is this? give -N NODE\n%s", kUsage);
    return false;
  }
  return true;
}

}  // namespace drover::agent
