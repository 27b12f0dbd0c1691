// libFuzzer target for the commands' option parsing, below the layer that prints and exits: the
// first byte picks a parser, the rest is its input, split at NUL bytes into argv words where the
// parser takes words. sbatch's command line, its #SBATCH lines and SBATCH_* variables (srun and
// salloc hand their allocation options to the same parser), srun's command split and
// --multi-prog file, scontrol's update/hold/top/reservation arguments, and GNU getopt's scan.
// Each must answer with a value or a message; what sbatch accepts the controller must decode.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cli/sbatch/sbatch_options.h"
#include "cli/scontrol/scontrol_request.h"
#include "cli/srun/srun_options.h"
#include "common/getopt.h"
#include "common/text.h"
#include "wire/job_spec_codec.h"

namespace {

using namespace drover;

constexpr int64_t kNow = 1'700'000'000;  // 2023-11-14: --begin=now+1hour and kin resolve here

template <typename T>
void CheckError(const Result<T>& result) {
  if (!result.ok() && result.error().empty()) __builtin_trap();
}

std::vector<std::string> Words(std::string_view text) {
  if (text.empty()) return {};
  return Split(text, '\0');
}

// sbatch with `argv`, the script `script` (for every path it reads) and `env`.
void Sbatch(const std::vector<std::string>& argv, const std::string& script,
            const std::map<std::string, std::string>& env) {
  auto read_file = [&script](const std::string&) -> Result<std::string> { return script; };
  auto request = cli::ParseSbatch(argv, read_file, env, "/home/alice", 1000, 1000, "alice", kNow);
  CheckError(request);
  if (!request.ok() || !request->print_and_exit.empty()) return;
  v1::JobSpec message;
  wire::ToProto(request->spec, &message);
  if (!wire::FromProto(message).ok()) __builtin_trap();
}

// A getopt table with every kind of option, short and long, and prefixes that collide.
constexpr OptionSpec kSpecs[] = {
    {'N', "nodes", OptionSpec::kRequired},
    {'n', "ntasks", OptionSpec::kRequired},
    {0, "ntasks-per-node", OptionSpec::kRequired},
    {'l', "label", OptionSpec::kNone},
    {0, "exclusive", OptionSpec::kOptional},
    {'h', "help", OptionSpec::kNone},
    {0, "het", OptionSpec::kNone},
    {'v', "verbose", OptionSpec::kNone},
};

void Getopt(const std::vector<std::string>& args, uint8_t flags) {
  ScanRules rules{(flags & 1) != 0, (flags & 2) != 0};
  OptionScan scan = ScanOptions(args, kSpecs, rules);
  if (scan.error && scan.error->empty()) __builtin_trap();
  if (scan.error && scan.error_argument >= args.size() && !args.empty()) __builtin_trap();
  for (size_t operand : scan.operands)
    if (operand >= args.size()) __builtin_trap();
  (void)FirstRefused(scan);
  CheckError(ParseOptions(args, kSpecs));
  if (size_t start = cli::CommandStart(args, kSpecs); start > args.size()) __builtin_trap();
}

void Scontrol(uint8_t which, const std::vector<std::string>& words) {
  switch (which % 5) {
    case 0:
      CheckError(cli::scontrol::ParseJobList(words));
      break;
    case 1:
      CheckError(cli::scontrol::ParseTopList(words));
      break;
    case 2:
      CheckError(cli::scontrol::ParseJobUpdate(words, kNow));
      break;
    case 3:
      CheckError(cli::scontrol::ParseNodeUpdate(words));
      break;
    case 4:
      CheckError(cli::scontrol::ParseReservation(words, kNow));
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const uint8_t kind = data[0], flags = data[1];
  std::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  switch (kind % 6) {
    case 0:  // sbatch's command line; the script is a plain one
      Sbatch(Words(rest), "#!/bin/sh\ntrue\n", {});
      break;
    case 1:  // a batch script's #SBATCH lines
      Sbatch({"job.sh"}, std::string(rest), {});
      break;
    case 2: {  // SBATCH_* input variables, NAME=value
      std::map<std::string, std::string> env;
      for (const std::string& entry : Words(rest))
        if (size_t equals = entry.find('='); equals != std::string::npos)
          env[entry.substr(0, equals)] = entry.substr(equals + 1);
      Sbatch({"--wrap=true"}, "", env);
      break;
    }
    case 3:  // srun --multi-prog's file, for up to 64 tasks
      CheckError(cli::ParseMultiProg(rest, "multi.conf", flags % 64));
      break;
    case 4:
      Scontrol(flags, Words(rest));
      break;
    case 5:
      Getopt(Words(rest), flags);
      break;
  }
  return 0;
}
