// #PBS and #BSUB lines; see sbatch_wrappers.h. The translations are Slurm's (its xlate of
// qsub's and bsub's options), as tables.
#include "cli/sbatch/sbatch_wrappers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "cli/sbatch/sbatch_option_table.h"
#include "cli/sbatch/sbatch_script.h"
#include "common/text.h"

namespace drover::cli::sbatch {
namespace {

// What a wrapper option does: stand for one of sbatch's options, need its own reading, or
// nothing (an option Slurm has no counterpart for, which Slurm skips too).
enum class Kind {
  kOption,
  kIgnored,
  kResourceList,
  kMailType,
  kVariables,
  kAttributes,
  kHosts,
  kTasks
};

struct Translation {
  OptionSpec spec;
  Kind kind = Kind::kIgnored;
  std::string_view option;  // sbatch's option, for kOption
};

using A = Arg;

// qsub's options (Torque and PBS Pro).
const std::vector<Translation> kPbs = {
    {{'a', "start_time", A::kRequired}, Kind::kOption, "begin"},
    {{'A', "account", A::kRequired}, Kind::kOption, "account"},
    {{'c', "checkpoint", A::kRequired}, Kind::kIgnored, {}},
    {{'C', "working_dir", A::kRequired}, Kind::kIgnored, {}},
    {{'e', "error", A::kRequired}, Kind::kOption, "error"},
    {{'h', "hold", A::kNone}, Kind::kOption, "hold"},
    {{'I', "interactive", A::kNone}, Kind::kIgnored, {}},
    {{'j', "join", A::kRequired}, Kind::kIgnored, {}},
    {{'J', "job_array", A::kRequired}, Kind::kOption, "array"},
    {{'k', "keep", A::kRequired}, Kind::kIgnored, {}},
    {{'l', "resource_list", A::kRequired}, Kind::kResourceList, {}},
    {{'m', "mail_options", A::kRequired}, Kind::kMailType, {}},
    {{'M', "mail_user_list", A::kRequired}, Kind::kOption, "mail-user"},
    {{'N', "job_name", A::kRequired}, Kind::kOption, "job-name"},
    {{'o', "out", A::kRequired}, Kind::kOption, "output"},
    {{'p', "priority", A::kRequired}, Kind::kOption, "nice"},
    {{'q', "destination", A::kRequired}, Kind::kOption, "partition"},
    {{'r', "rerunable", A::kRequired}, Kind::kIgnored, {}},
    {{'S', "script_path", A::kRequired}, Kind::kIgnored, {}},
    {{'t', "array", A::kRequired}, Kind::kOption, "array"},
    {{'u', "running_user", A::kRequired}, Kind::kIgnored, {}},
    {{'v', "variable_list", A::kRequired}, Kind::kVariables, {}},
    {{'V', "all_env", A::kNone}, Kind::kIgnored, {}},
    {{'W', "attributes", A::kRequired}, Kind::kAttributes, {}},
    {{'z', "no_std", A::kNone}, Kind::kIgnored, {}},
};

// bsub's options.
const std::vector<Translation> kBsub = {
    {{'c', "cwd", A::kRequired}, Kind::kOption, "chdir"},
    {{'e', "error_file", A::kRequired}, Kind::kOption, "error"},
    {{'J', "job_name", A::kRequired}, Kind::kOption, "job-name"},
    {{'m', "hostname", A::kRequired}, Kind::kHosts, {}},
    {{'M', "memory_limit", A::kRequired}, Kind::kOption, "mem-per-cpu"},
    {{'n', "", A::kRequired}, Kind::kTasks, {}},
    {{'o', "output_file", A::kRequired}, Kind::kOption, "output"},
    {{'q', "queue_name", A::kRequired}, Kind::kOption, "partition"},
    {{'W', "time", A::kRequired}, Kind::kOption, "time"},
    {{'x', "exclusive", A::kNone}, Kind::kOption, "exclusive"},
};

struct Context {
  const Inputs& in;
  Settings& s;
};

Status ApplyAs(Context& c, std::string_view option, std::optional<std::string> value) {
  return Apply(Use{&Option(option), std::move(value), Source::kScript, nullptr}, c.in, c.s);
}

// Torque gives sizes as "4gb"; Slurm's sizes end in the unit letter alone.
std::string WithoutByteSuffix(std::string value) {
  if (!value.empty() && std::toupper(static_cast<unsigned char>(value.back())) == 'B')
    value.pop_back();
  return value;
}

// nodes=N[:ppn=P][+host...]: the node count, tasks (P per node) and named hosts.
Status ApplyPbsNodes(Context& c, std::string_view value) {
  uint64_t nodes = 0, ppn = 0;
  std::vector<std::string> hosts;
  for (const std::string& plus : Split(value, '+'))
    for (const std::string& part : Split(plus, ':')) {
      if (part.starts_with("ppn="))
        ppn += ParseUint64(std::string_view(part).substr(4)).value_or(0);
      else if (!part.empty() && std::isdigit(static_cast<unsigned char>(part[0])))
        nodes += ParseUint64(part).value_or(0);
      else if (!part.empty() && std::isalpha(static_cast<unsigned char>(part[0])))
        hosts.push_back(part);
    }
  if (nodes > 0)
    if (Status ok = ApplyAs(c, "nodes", std::to_string(nodes)); !ok) return ok;
  if (ppn > 0)
    if (Status ok = ApplyAs(c, "ntasks", std::to_string(ppn * std::max<uint64_t>(nodes, 1))); !ok)
      return ok;
  if (!hosts.empty()) return ApplyAs(c, "nodelist", Join(hosts, ","));
  return OkStatus();
}

struct ResourceTotals {
  int pro_flags = 0;  // PBS Pro's select (1), ncpus (2) and mpiprocs (4) given
  uint64_t gpus = 0;  // accelerator=true or naccelerators=N
};

// One key=value of -l.
Status ApplyResource(Context& c, std::string_view key, const std::string& value,
                     ResourceTotals& totals) {
  if (key == "walltime" || key == "cput" || key == "pcput") return ApplyAs(c, "time", value);
  if (key == "mem") return ApplyAs(c, "mem", WithoutByteSuffix(value));
  if (key == "file") return ApplyAs(c, "tmp", WithoutByteSuffix(value));
  if (key == "nice") return ApplyAs(c, "nice", value);
  if (key == "nodes") return ApplyPbsNodes(c, value);
  if (key == "proc")  // features, with any already asked for
    return ApplyAs(c, "constraint", c.s.constraint ? value + "&" + *c.s.constraint : value);
  if (key == "select") {
    totals.pro_flags |= 1;
    return ApplyAs(c, "nodes", value);
  }
  if (key == "ncpus") {
    totals.pro_flags |= 2;
    return ApplyAs(c, "mincpus", value);
  }
  if (key == "mpiprocs") {
    totals.pro_flags |= 4;
    return ApplyAs(c, "ntasks-per-node", value);
  }
  if (key == "naccelerators") return ApplyAs(c, "gpus", value);
  if (key == "accelerator" && StartsWithIgnoreCase(value, "true"))
    totals.gpus = std::max<uint64_t>(totals.gpus, 1);
  return OkStatus();  // arch, host, opsys, other, pmem, pvmem, software, vmem: as Slurm, none
}

// -l list: comma-separated key=value; PBS Pro's select, ncpus and mpiprocs end at ':', which
// starts the next key ("select=2:ncpus=8:mpiprocs=4").
Status ApplyResourceList(Context& c, std::string_view list) {
  ResourceTotals totals;
  for (const std::string& item : Split(list, ',')) {
    std::string_view rest = item;
    while (!rest.empty()) {
      size_t equals = rest.find('=');
      if (equals == std::string_view::npos) break;
      std::string key = ToLower(std::string(rest.substr(0, equals)));
      std::string_view value = rest.substr(equals + 1);
      std::string_view next;
      if (key == "select" || key == "ncpus" || key == "mpiprocs") {
        size_t colon = value.find(':');
        if (colon != std::string_view::npos) {
          next = value.substr(colon + 1);
          value = value.substr(0, colon);
        }
      }
      if (Status ok = ApplyResource(c, key, std::string(value), totals); !ok) return ok;
      rest = next;
    }
  }
  // Slurm: PBS Pro's CPUs per chunk over its tasks per chunk gives CPUs per task.
  uint32_t per_node = c.s.ntasks_per_node.value_or(0);
  if (totals.pro_flags == 7 && per_node > 0 && c.s.mincpus.value_or(0) > per_node)
    if (Status ok = ApplyAs(c, "cpus-per-task", std::to_string(*c.s.mincpus / per_node)); !ok)
      return ok;
  if (totals.gpus > 0) {
    std::vector<GresSpec> gres = c.s.gres.value_or(std::vector<GresSpec>{});
    gres.push_back(GresSpec{"gpu", "", totals.gpus, {}});
    c.s.gres = std::move(gres);
  }
  return OkStatus();
}

// -m: a (abort), b (begin), e (end), n (none).
std::string PbsMailType(std::string_view letters) {
  std::string lower = ToLower(std::string(letters));
  if (lower.find('n') != std::string::npos) return "NONE";
  std::vector<std::string> types;
  if (lower.find('b') != std::string::npos) types.push_back("BEGIN");
  if (lower.find('e') != std::string::npos) types.push_back("END");
  if (lower.find('a') != std::string::npos) types.push_back("FAIL");
  return Join(types, ",");
}

Status ApplySpecial(Context& c, Kind kind, const std::string& value) {
  switch (kind) {
    case Kind::kResourceList:
      return ApplyResourceList(c, value);
    case Kind::kMailType:
      return ApplyAs(c, "mail-type", PbsMailType(value));
    case Kind::kVariables:  // added to any --export already given
      return ApplyAs(c, "export", c.s.export_env ? *c.s.export_env + "," + value : value);
    case Kind::kAttributes:
      if (StartsWithIgnoreCase(value, "depend=")) return ApplyAs(c, "dependency", value.substr(7));
      if (StartsWithIgnoreCase(value, "umask="))
        c.s.Notice(
            "sbatch: warning: #PBS -W umask= is not supported by Drover; the job keeps "
            "sbatch's umask");
      return OkStatus();  // other attributes: Slurm ignores them too
    case Kind::kHosts: {  // bsub separates hosts with spaces
      std::string hosts = value;
      std::replace(hosts.begin(), hosts.end(), ' ', ',');
      return ApplyAs(c, "nodelist", hosts);
    }
    case Kind::kTasks: {  // bsub's "min,max": Slurm takes the maximum
      size_t comma = value.find(',');
      if (comma != std::string::npos && comma + 1 == value.size())
        return Fail(fmt::format("#BSUB -n format not correct given: '{}'", value));
      return ApplyAs(c, "ntasks", comma == std::string::npos ? value : value.substr(comma + 1));
    }
    default:
      return OkStatus();
  }
}

// Applies one kind of wrapper lines; false when the script has none.
Result<bool> ApplyWrapper(std::string_view script, std::string_view magic,
                          const std::vector<Translation>& table, Context& c) {
  Result<std::vector<ScriptWord>> words = DirectiveWords(script, magic, 100);
  if (!words) return std::move(words).take_error();
  if (words->empty()) {  // a bare "#PBS" line still counts as the script's kind
    std::vector<std::string> lines = Split(script, '\n');
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& line) { return line.starts_with(magic); });
  }
  std::vector<std::string> args;
  for (const ScriptWord& word : *words) args.push_back(word.text == "-cwd" ? "-c" : word.text);
  std::vector<OptionSpec> specs;
  for (const Translation& t : table) specs.push_back(t.spec);
  OptionScan scan = ScanOptions(args, specs, {.stop_at_operand = true});
  auto origin = [&](size_t index) {
    return fmt::format("{} on line {}", magic, (*words)[std::min(index, words->size() - 1)].line);
  };
  for (const OptionUse& use : scan.uses) {
    const Translation& t = table[static_cast<size_t>(use.spec - specs.data())];
    Status ok = t.kind == Kind::kOption    ? ApplyAs(c, t.option, use.value)
                : t.kind == Kind::kIgnored ? OkStatus()
                                           : ApplySpecial(c, t.kind, *use.value);
    if (!ok) return WithOrigin(std::move(ok).take_error(), origin(use.argument));
  }
  if (scan.error)
    return WithOrigin(
        MakeError(fmt::format("sbatch: {}\nsbatch: error: Unrecognized command line parameter ?",
                              *scan.error)),
        origin(scan.error_argument));
  if (!scan.operands.empty())
    return WithOrigin(Fail(fmt::format("Invalid argument: {}", args[scan.operands.front()])),
                      origin(scan.operands.front()));
  return true;
}

}  // namespace

Status ApplyWrapperDirectives(std::string_view script, const Inputs& in, Settings& s) {
  Context c{in, s};
  // Slurm translates one kind at most: #BSUB lines when there are any, else #PBS lines.
  Result<bool> bsub = ApplyWrapper(script, "#BSUB", kBsub, c);
  if (!bsub) return std::move(bsub).take_error();
  if (*bsub) return OkStatus();
  Result<bool> pbs = ApplyWrapper(script, "#PBS", kPbs, c);
  if (!pbs) return std::move(pbs).take_error();
  return OkStatus();
}

}  // namespace drover::cli::sbatch
