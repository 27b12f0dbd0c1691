// The REST API's job submission: see job_submit.h.
#include "cli/restd/job_submit.h"

#include <ctime>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace drover::cli::restd {
namespace {

using Json = nlohmann::json;

enum class Kind {
  kText,    // a string (a number is taken as its digits): --option=VALUE
  kNumber,  // a whole number (or a string of digits): --option=N
  kFlag,    // true: --option; false: the `negative` form, or nothing
};

struct Field {
  const char* name;  // job_properties' name
  const char* option;
  Kind kind;
  const char* negative = nullptr;  // kFlag: the option for false
};

// Slurm 22.05's job_properties, each as the sbatch option it sets. Those that need more than
// one option's words (nodes, exclusive, begin_time, environment, argv, script) are in Read.
constexpr Field kFields[] = {
    {"account", "--account", Kind::kText},
    {"account_gather_frequency", "--acctg-freq", Kind::kText},
    {"account_gather_freqency", "--acctg-freq", Kind::kText},  // v0.0.38's spec spells it so
    {"array", "--array", Kind::kText},
    {"batch_features", "--batch", Kind::kText},
    {"burst_buffer", "--bb", Kind::kText},
    {"cluster_constraint", "--cluster-constraint", Kind::kText},
    {"cluster_constraints", "--cluster-constraint", Kind::kText},  // the spec's other name
    {"comment", "--comment", Kind::kText},
    {"constraints", "--constraint", Kind::kText},
    {"container", "--container", Kind::kText},
    {"core_specification", "--core-spec", Kind::kNumber},
    {"cores_per_socket", "--cores-per-socket", Kind::kNumber},
    {"cpu_binding", "--cpu-bind", Kind::kText},
    {"cpu_binding_hint", "--hint", Kind::kText},
    {"cpu_frequency", "--cpu-freq", Kind::kText},
    {"cpus_per_gpu", "--cpus-per-gpu", Kind::kText},
    {"cpus_per_task", "--cpus-per-task", Kind::kNumber},
    {"current_working_directory", "--chdir", Kind::kText},
    {"deadline", "--deadline", Kind::kText},
    {"delay_boot", "--delay-boot", Kind::kNumber},
    {"dependency", "--dependency", Kind::kText},
    {"distribution", "--distribution", Kind::kText},
    {"get_user_environment", "--get-user-env", Kind::kFlag},
    {"gres", "--gres", Kind::kText},
    {"gres_flags", "--gres-flags", Kind::kText},
    {"gpu_binding", "--gpu-bind", Kind::kText},
    {"gpu_frequency", "--gpu-freq", Kind::kText},
    {"gpus", "--gpus", Kind::kText},
    {"gpus_per_node", "--gpus-per-node", Kind::kText},
    {"gpus_per_socket", "--gpus-per-socket", Kind::kText},
    {"gpus_per_task", "--gpus-per-task", Kind::kText},
    {"hold", "--hold", Kind::kFlag},
    {"kill_on_invalid_dependency", "--kill-on-invalid-dep=yes", Kind::kFlag,
     "--kill-on-invalid-dep=no"},
    {"licenses", "--licenses", Kind::kText},
    {"mail_type", "--mail-type", Kind::kText},
    {"mail_user", "--mail-user", Kind::kText},
    {"mcs_label", "--mcs-label", Kind::kText},
    {"memory_binding", "--mem-bind", Kind::kText},
    {"memory_per_cpu", "--mem-per-cpu", Kind::kNumber},
    {"memory_per_gpu", "--mem-per-gpu", Kind::kNumber},
    {"memory_per_node", "--mem", Kind::kNumber},
    {"minimum_cpus_per_node", "--mincpus", Kind::kNumber},
    {"minimum_nodes", "--use-min-nodes", Kind::kFlag},
    {"name", "--job-name", Kind::kText},
    {"nice", "--nice", Kind::kNumber},
    {"no_kill", "--no-kill", Kind::kFlag},
    {"open_mode", "--open-mode", Kind::kText},
    {"oversubscribe", "--oversubscribe", Kind::kFlag},
    {"partition", "--partition", Kind::kText},
    {"prefer", "--prefer", Kind::kText},
    {"priority", "--priority", Kind::kText},
    {"qos", "--qos", Kind::kText},
    {"requeue", "--requeue", Kind::kFlag, "--no-requeue"},
    {"reservation", "--reservation", Kind::kText},
    {"signal", "--signal", Kind::kText},
    {"sockets_per_node", "--sockets-per-node", Kind::kNumber},
    {"spread_job", "--spread-job", Kind::kFlag},
    {"standard_error", "--error", Kind::kText},
    {"standard_input", "--input", Kind::kText},
    {"standard_output", "--output", Kind::kText},
    {"tasks", "--ntasks", Kind::kNumber},
    {"tasks_per_core", "--ntasks-per-core", Kind::kNumber},
    {"tasks_per_node", "--ntasks-per-node", Kind::kNumber},
    {"tasks_per_socket", "--ntasks-per-socket", Kind::kNumber},
    {"thread_specification", "--thread-spec", Kind::kNumber},
    {"threads_per_core", "--threads-per-core", Kind::kNumber},
    {"time_limit", "--time", Kind::kNumber},  // minutes, as sbatch reads a bare number
    {"time_minimum", "--time-min", Kind::kNumber},
    {"wait_all_nodes", "--wait-all-nodes=1", Kind::kFlag, "--wait-all-nodes=0"},
    {"wckey", "--wckey", Kind::kText},
};

// Handled below, not in kFields.
constexpr const char* kSpecial[] = {"nodes",       "exclusive", "begin_time",
                                    "environment", "argv",      "script"};

// A bound on what one request may hold (the body is bounded by the server too).
constexpr size_t kMaxEnvironment = 4096;
constexpr size_t kMaxArguments = 4096;

std::string TypeName(const Json& value) {
  return value.is_string()    ? "a string"
         : value.is_boolean() ? "a boolean"
         : value.is_number()  ? "a number"
         : value.is_array()   ? "an array"
         : value.is_object()  ? "an object"
                              : "null";
}

Error WrongType(std::string_view field, std::string_view wanted, const Json& value) {
  return MakeError(
      fmt::format("job field \"{}\" takes {}, not {}", field, wanted, TypeName(value)));
}

// A whole number, as JSON or as a string of digits.
std::optional<int64_t> WholeNumber(const Json& value) {
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    if (text.empty() || text.size() > 18) return std::nullopt;
    size_t start = text[0] == '-' ? 1 : 0;
    if (start == text.size()) return std::nullopt;
    for (size_t i = start; i < text.size(); ++i)
      if (text[i] < '0' || text[i] > '9') return std::nullopt;
    return std::stoll(text);
  }
  return std::nullopt;
}

Result<std::string> TextOf(std::string_view field, const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) return std::to_string(value.get<int64_t>());
  return WrongType(field, "a string", value);
}

const Field* FindField(std::string_view name) {
  for (const Field& field : kFields)
    if (name == field.name) return &field;
  return nullptr;
}

// "nodes": [min, max], [count], a count, or sbatch's own "min-max" text.
Result<std::string> NodesOf(const Json& value) {
  if (value.is_array()) {
    if (value.empty() || value.size() > 2)
      return MakeError("job field \"nodes\" takes [minimum] or [minimum, maximum]");
    std::vector<std::string> counts;
    for (const Json& item : value) {
      std::optional<int64_t> count = WholeNumber(item);
      if (!count || *count < 1)
        return MakeError("job field \"nodes\" takes whole numbers of 1 or more");
      counts.push_back(std::to_string(*count));
    }
    return counts.size() == 1 ? counts[0] : counts[0] + "-" + counts[1];
  }
  return TextOf("nodes", value);
}

Result<std::string> ExclusiveOf(const Json& value) {
  if (value.is_boolean()) return value.get<bool>() ? std::string("--exclusive") : std::string();
  if (!value.is_string())
    return WrongType("exclusive", "\"user\", \"mcs\", \"true\" or \"false\"", value);
  const std::string& text = value.get_ref<const std::string&>();
  if (text == "true") return std::string("--exclusive");
  if (text == "false") return std::string();
  if (text == "user" || text == "mcs") return "--exclusive=" + text;
  return MakeError(fmt::format(
      "job field \"exclusive\" takes \"user\", \"mcs\", \"true\" or \"false\", not \"{}\"", text));
}

// "begin_time": seconds since the epoch, as the local time sbatch's --begin reads.
Result<std::string> BeginOf(const Json& value) {
  if (value.is_string()) return value.get<std::string>();  // sbatch's own words ("now+1hour")
  std::optional<int64_t> seconds = WholeNumber(value);
  if (!seconds || *seconds < 0) return WrongType("begin_time", "seconds since the epoch", value);
  std::time_t time = static_cast<std::time_t>(*seconds);
  std::tm local{};
  localtime_r(&time, &local);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &local);
  return std::string(text);
}

// "environment": {"NAME": "value"} (v0.0.38) or ["NAME=value"] (later versions).
Status EnvironmentOf(const Json& value, std::map<std::string, std::string>& out) {
  auto add = [&out](const std::string& name, const std::string& text) -> Status {
    if (name.empty() || name.find('=') != std::string::npos ||
        name.find('\0') != std::string::npos || text.find('\0') != std::string::npos)
      return MakeError(fmt::format("job field \"environment\": invalid variable name '{}'", name));
    if (out.size() >= kMaxEnvironment)
      return MakeError(
          fmt::format("job field \"environment\" has more than {} variables", kMaxEnvironment));
    out[name] = text;
    return OkStatus();
  };
  if (value.is_object()) {
    for (const auto& [name, text] : value.items()) {
      if (!text.is_string()) return WrongType("environment." + name, "a string", text);
      if (Status added = add(name, text.get<std::string>()); !added) return added;
    }
    return OkStatus();
  }
  if (value.is_array()) {
    for (const Json& item : value) {
      if (!item.is_string()) return WrongType("environment", "\"NAME=value\" strings", item);
      const std::string& entry = item.get_ref<const std::string&>();
      size_t equals = entry.find('=');
      if (equals == std::string::npos)
        return MakeError(
            fmt::format("job field \"environment\": '{}' is not NAME=value", entry.substr(0, 64)));
      if (Status added = add(entry.substr(0, equals), entry.substr(equals + 1)); !added)
        return added;
    }
    return OkStatus();
  }
  return WrongType("environment", "an object of NAME: value", value);
}

struct Arguments {
  std::vector<std::string> options;
  std::vector<std::string> script_args;
  std::map<std::string, std::string> environment;
  bool has_environment = false;
  std::optional<std::string> script;
};

Status Read(const Json& job, Arguments& out) {
  if (!job.is_object()) return WrongType("job", "an object", job);
  for (const auto& [name, value] : job.items()) {
    if (value.is_null()) continue;  // as absent
    if (const Field* field = FindField(name)) {
      switch (field->kind) {
        case Kind::kText: {
          Result<std::string> text = TextOf(name, value);
          if (!text) return std::move(text).take_error();
          out.options.push_back(fmt::format("{}={}", field->option, *text));
          break;
        }
        case Kind::kNumber: {
          std::optional<int64_t> number = WholeNumber(value);
          if (!number) return WrongType(name, "a whole number", value);
          out.options.push_back(fmt::format("{}={}", field->option, *number));
          break;
        }
        case Kind::kFlag: {
          if (!value.is_boolean()) return WrongType(name, "true or false", value);
          if (value.get<bool>())
            out.options.emplace_back(field->option);
          else if (field->negative)
            out.options.emplace_back(field->negative);
          break;
        }
      }
      continue;
    }
    if (name == "nodes") {
      Result<std::string> nodes = NodesOf(value);
      if (!nodes) return std::move(nodes).take_error();
      out.options.push_back("--nodes=" + *nodes);
    } else if (name == "exclusive") {
      Result<std::string> exclusive = ExclusiveOf(value);
      if (!exclusive) return std::move(exclusive).take_error();
      if (!exclusive->empty()) out.options.push_back(*exclusive);
    } else if (name == "begin_time") {
      Result<std::string> begin = BeginOf(value);
      if (!begin) return std::move(begin).take_error();
      out.options.push_back("--begin=" + *begin);
    } else if (name == "environment") {
      if (Status read = EnvironmentOf(value, out.environment); !read) return read;
      out.has_environment = true;
    } else if (name == "argv") {
      if (!value.is_array()) return WrongType("argv", "an array of strings", value);
      if (value.size() > kMaxArguments)
        return MakeError(fmt::format("job field \"argv\" has more than {} items", kMaxArguments));
      for (const Json& item : value) {
        if (!item.is_string()) return WrongType("argv", "an array of strings", item);
        out.script_args.push_back(item.get<std::string>());
      }
    } else if (name == "script") {
      if (!value.is_string()) return WrongType("script", "a string", value);
      out.script = value.get<std::string>();
    } else {
      return MakeError(
          fmt::format("unknown job field \"{}\" (the fields are Slurm 22.05's "
                      "job_properties: see /openapi/v3)",
                      name));
    }
  }
  return OkStatus();
}

}  // namespace

Result<std::vector<std::string>> SbatchArgumentsOf(std::string_view job_json) {
  Json job = Json::parse(job_json, nullptr, /*allow_exceptions=*/false);
  if (job.is_discarded()) return MakeError("the job is not JSON");
  Arguments arguments;
  if (Status read = Read(job, arguments); !read) return std::move(read).take_error();
  return arguments.options;
}

Result<SbatchRequest> ParseJobSubmission(std::string_view body, const Submitter& submitter) {
  Json request = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (request.is_discarded()) return MakeError("the request body is not JSON");
  if (!request.is_object()) return MakeError("the request body is not a JSON object");
  Arguments arguments;
  bool has_job = false;
  for (const auto& [name, value] : request.items()) {
    if (name == "job") {
      if (Status read = Read(value, arguments); !read) return std::move(read).take_error();
      has_job = true;
    } else if (name == "script") {
      if (!value.is_string()) return WrongType("script", "a string", value);
      arguments.script = value.get<std::string>();
    } else if (name == "jobs") {
      return MakeError("heterogeneous jobs (\"jobs\") are not supported: submit one \"job\"");
    } else {
      return MakeError(
          fmt::format("unknown field \"{}\" (a submission has \"job\" and \"script\")", name));
    }
  }
  if (!has_job) return MakeError("the request has no \"job\": the job's description");
  if (!arguments.script || arguments.script->empty())
    return MakeError("the request has no \"script\": the batch script to run");
  if (!arguments.has_environment)
    return MakeError(
        "the job has no \"environment\": give the variables the script runs with (at least "
        "PATH), as slurmrestd requires");
  std::vector<std::string> argv = arguments.options;
  argv.emplace_back("-");
  argv.insert(argv.end(), arguments.script_args.begin(), arguments.script_args.end());
  const std::string script = *arguments.script;
  ReadFile read_file = [&script](const std::string& path) -> Result<std::string> {
    if (path == "-") return script;
    return MakeError(fmt::format(
        "the REST API reads no files on its host ({}): give the content in the request", path));
  };
  const std::string& cwd = submitter.home.empty() ? std::string("/") : submitter.home;
  return ParseSbatchCommandLine(argv, read_file, arguments.environment, cwd, submitter.uid,
                                submitter.gid, submitter.user, submitter.now);
}

Result<JobUpdate> ParseJobUpdate(std::string_view body) {
  Json document = Json::parse(body, nullptr, false);
  if (document.is_discarded())
    return MakeError("the request body is not JSON: give the fields to change, as an object");
  if (!document.is_object()) return MakeError("the request body must be a JSON object");
  if (document.contains("job")) {
    if (document.size() != 1 || !document["job"].is_object())
      return MakeError("give the fields to change as an object, or inside \"job\" alone");
    document = document["job"];
  }
  if (document.empty()) return MakeError("the request names no field to change");
  // Slurm's job_properties names: the scontrol key each stands for, and its JSON type.
  enum class Kind { kString, kInteger, kBool };
  struct Field {
    const char* key;  // scontrol update job's; empty: a field of UpdateJobRequest of its own
    Kind kind;
  };
  static const std::map<std::string, Field> kFields = {
      {"name", {"", Kind::kString}},
      {"time_limit", {"", Kind::kInteger}},
      {"nice", {"", Kind::kInteger}},
      {"partition", {"", Kind::kString}},
      {"qos", {"", Kind::kString}},
      {"hold", {"", Kind::kBool}},
      {"account", {"Account", Kind::kString}},
      {"comment", {"Comment", Kind::kString}},
      {"dependency", {"Dependency", Kind::kString}},
      {"begin_time", {"StartTime", Kind::kInteger}},
      {"deadline", {"Deadline", Kind::kInteger}},
      {"priority", {"Priority", Kind::kInteger}},
      {"requeue", {"Requeue", Kind::kBool}},
      {"reservation", {"ReservationName", Kind::kString}},
      {"constraints", {"Features", Kind::kString}},
      {"exclude", {"ExcNodeList", Kind::kString}},
      {"nodes", {"NumNodes", Kind::kString}},
      {"tasks", {"NumTasks", Kind::kInteger}},
      {"tasks_per_node", {"TasksPerNode", Kind::kInteger}},
      {"cpus_per_task", {"CpusPerTask", Kind::kInteger}},
      {"memory_per_node", {"MinMemoryNode", Kind::kInteger}},
      {"memory_per_cpu", {"MinMemoryCPU", Kind::kInteger}},
      {"time_minimum", {"TimeMin", Kind::kInteger}},
      {"standard_output", {"StdOut", Kind::kString}},
      {"standard_error", {"StdErr", Kind::kString}},
      {"standard_input", {"StdIn", Kind::kString}},
      {"current_working_directory", {"WorkDir", Kind::kString}},
      {"mail_type", {"MailType", Kind::kString}},
      {"mail_user", {"MailUser", Kind::kString}},
      {"licenses", {"Licenses", Kind::kString}},
      {"prefer", {"Prefer", Kind::kString}},
  };
  JobUpdate update;
  v1::UpdateJobRequest& request = update.request;
  for (const auto& [name, value] : document.items()) {
    auto field = kFields.find(name);
    if (field == kFields.end()) {
      std::string known;
      for (const auto& [known_name, unused] : kFields)
        known += (known.empty() ? "" : ", ") + known_name;
      return MakeError(
          fmt::format("unknown field \"{}\"; a job's fields that change: {}", name, known));
    }
    Kind kind = field->second.kind;
    if (name == "nodes" && value.is_number_integer()) kind = Kind::kInteger;  // 3, or "2-4"
    if ((kind == Kind::kString && !value.is_string()) ||
        (kind == Kind::kInteger && !value.is_number_integer()) ||
        (kind == Kind::kBool && !value.is_boolean()))
      return MakeError(fmt::format("\"{}\" takes {}", name,
                                   kind == Kind::kString    ? "a string"
                                   : kind == Kind::kInteger ? "an integer"
                                                            : "true or false"));
    if (kind == Kind::kString && value.get<std::string>().size() > 4096)
      return MakeError(fmt::format("\"{}\": at most 4096 characters", name));
    if (name == "hold") {
      update.hold = value.get<bool>();
      continue;
    }
    if (name == "name") request.set_name(value.get<std::string>());
    if (name == "partition") request.set_partition(value.get<std::string>());
    if (name == "qos") request.set_qos(value.get<std::string>());
    if (name == "nice") {
      int64_t nice = value.get<int64_t>();
      if (nice < -2147483645 || nice > 2147483645) return MakeError("\"nice\" is out of range");
      request.set_nice(static_cast<int32_t>(nice));
    }
    if (name == "time_limit") {
      int64_t minutes = value.get<int64_t>();
      if (minutes < 1 || minutes > 365LL * 24 * 60 * 100)
        return MakeError("\"time_limit\" takes minutes, 1 or more");
      request.set_time_limit_seconds(minutes * 60);
    }
    const std::string key = field->second.key;
    if (key.empty()) continue;
    std::string text;
    if (kind == Kind::kString) text = value.get<std::string>();
    if (kind == Kind::kBool) text = value.get<bool>() ? "1" : "0";
    if (kind == Kind::kInteger) {
      int64_t number = value.get<int64_t>();
      if (number < 0) return MakeError(fmt::format("\"{}\" takes 0 or more", name));
      if (key == "StartTime" || key == "Deadline") {
        // Seconds since the epoch, as scontrol's YYYY-MM-DDTHH:MM:SS in local time.
        std::time_t when = static_cast<std::time_t>(number);
        std::tm local{};
        if (!localtime_r(&when, &local)) return MakeError(fmt::format("\"{}\": not a time", name));
        char buffer[32];
        std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S", &local);
        text = buffer;
      } else {
        text = std::to_string(number);
      }
    }
    request.add_settings(key + "=" + text);
  }
  return update;
}

}  // namespace drover::cli::restd
