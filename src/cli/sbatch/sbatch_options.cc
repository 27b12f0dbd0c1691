// Reads sbatch's command line, #SBATCH lines and SBATCH_* variables; see sbatch_options.h. Two
// passes, as Slurm's sbatch makes them: the options it needs before the script, then the script's
// lines, the environment and the command line, each overriding the one before.
#include "cli/sbatch/sbatch_options.h"

#include <algorithm>
#include <ctime>

#include "cli/sbatch/sbatch_help.h"
#include "cli/sbatch/sbatch_input_environment.h"
#include "cli/sbatch/sbatch_option_table.h"
#include "cli/sbatch/sbatch_resolve.h"
#include "cli/sbatch/sbatch_script.h"
#include "cli/sbatch/sbatch_settings.h"
#include "cli/sbatch/sbatch_wrappers.h"

namespace drover::cli {
namespace {

using namespace sbatch;

std::string BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace

namespace {

// `directives`: the script's #SBATCH (#PBS, #BSUB) lines and the SBATCH_* variables count.
Result<SbatchRequest> Parse(std::span<const std::string> argv, const ReadFile& read_file,
                            const std::map<std::string, std::string>& environment,
                            const std::string& cwd, uint32_t uid, uint32_t gid,
                            const std::string& user, int64_t now, bool directives) {
  const Inputs in{read_file, environment, cwd, uid, now};
  SbatchRequest request;
  Settings s;
  // First pass, as sbatch's: getopt errors, --help and its kin, --wrap, -Q; and the script.
  ScannedOptions command_line = ScanSbatchOptions(argv);
  for (auto& [use, index] : command_line.uses) {
    if (!use.def->early) continue;
    if (std::optional<std::string> output = EarlyOutput(use.def->name)) {
      request.print_and_exit = std::move(*output);
      return request;
    }
    if (Status ok = Apply(use, in, s); !ok) return std::move(ok).take_error();
  }
  if (!command_line.error.empty()) return MakeError(command_line.error);
  std::span<const std::string> operands = argv.subspan(command_line.operands);
  if (s.wrap && !operands.empty()) return Fail("Script arguments not permitted with --wrap option");
  std::optional<std::string> operand;
  if (!operands.empty()) operand = operands.front();
  if (s.wrap) {
    request.script = WrapScript(*s.wrap);
  } else {
    Result<std::string> script = ReadScript(operand, in);
    if (!script) return std::move(script).take_error();
    if (Status ok = CheckScript(*script); !ok) return std::move(ok).take_error();
    request.script = std::move(*script);
    if (!operands.empty()) request.spec.script_args.assign(operands.begin() + 1, operands.end());
  }
  // Second pass: #SBATCH lines (a --wrap script's too, as in Slurm), then SBATCH_* variables,
  // then the command line.
  if (directives) {
    if (Status ok = ApplyScript(request.script, in, s); !ok) return std::move(ok).take_error();
    // Slurm looks for --ignore-pbs among #SBATCH lines, in the environment (set at all) and as
    // a whole word of the command line, before reading #PBS and #BSUB lines.
    bool ignore_pbs = s.ignore_pbs || environment.contains("SBATCH_IGNORE_PBS") ||
                      std::find(argv.begin(), argv.end(), "--ignore-pbs") != argv.end();
    if (!ignore_pbs)
      if (Status ok = ApplyWrapperDirectives(request.script, in, s); !ok)
        return std::move(ok).take_error();
    if (Status ok = ApplyEnvironment(in, s); !ok) return std::move(ok).take_error();
  }
  for (auto& [use, index] : command_line.uses) {
    if (use.def->early) continue;
    if (Status ok = Apply(use, in, s); !ok) return std::move(ok).take_error();
  }
  if (Status ok = Finish(s, in, request); !ok) return std::move(ok).take_error();
  JobSpec& spec = request.spec;
  spec.name = s.name                       ? *s.name
              : s.wrap                     ? "wrap"
              : operand && *operand != "-" ? BaseName(*operand)
                                           : "sbatch";
  spec.user = s.run_user.value_or(user);  // --uid (root only): the job runs as that user
  spec.uid = s.run_uid.value_or(uid);
  spec.gid = s.run_gid ? *s.run_gid : s.run_uid_group.value_or(gid);
  return request;
}

}  // namespace

Result<SbatchRequest> ParseSbatch(std::span<const std::string> argv, const ReadFile& read_file,
                                  const std::map<std::string, std::string>& environment,
                                  const std::string& cwd, uint32_t uid, uint32_t gid,
                                  const std::string& user, int64_t now) {
  return Parse(argv, read_file, environment, cwd, uid, gid, user, now, true);
}

Result<SbatchRequest> ParseSbatchCommandLine(std::span<const std::string> argv,
                                             const ReadFile& read_file,
                                             const std::map<std::string, std::string>& environment,
                                             const std::string& cwd, uint32_t uid, uint32_t gid,
                                             const std::string& user, int64_t now) {
  return Parse(argv, read_file, environment, cwd, uid, gid, user, now, false);
}

Result<SbatchRequest> ParseSbatch(std::span<const std::string> argv, const ReadFile& read_file,
                                  const std::map<std::string, std::string>& environment,
                                  const std::string& cwd, uint32_t uid, uint32_t gid,
                                  const std::string& user) {
  return ParseSbatch(argv, read_file, environment, cwd, uid, gid, user,
                     static_cast<int64_t>(std::time(nullptr)));
}

}  // namespace drover::cli
