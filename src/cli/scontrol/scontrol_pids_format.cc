// See scontrol_pids.h.
#include <fmt/format.h>

#include <ctime>
#include <filesystem>

#include "cli/formats/formats.h"
#include "cli/scontrol/scontrol_pids.h"
#include "common/agent_address.h"
#include "common/duration.h"
#include "common/text.h"

namespace drover::cli::scontrol {

namespace {
constexpr uint32_t kBatchStep = 4294967294u;
constexpr uint32_t kExternStep = 4294967291u;
constexpr int64_t kYear = 365 * 24 * 3600;

std::string ShortName(const std::string& host) {
  return host.substr(0, host.find('.'));
}
}  // namespace

Result<v1::ListPidsRequest> ParsePidsTarget(const std::string& word) {
  v1::ListPidsRequest request;
  if (word.empty() || word[0] == '*') return request;
  std::string job = word.substr(0, word.find('.'));
  auto id = ParseUint64(job);
  if (!id || *id == 0) return MakeError("Invalid job id: " + word);
  request.set_job_id(*id);
  if (job.size() == word.size()) return request;
  std::string step = word.substr(job.size() + 1);
  if (EqualsIgnoreCase(step, "batch")) {
    request.set_step_id(kBatchStep);
  } else if (EqualsIgnoreCase(step, "extern")) {
    request.set_step_id(kExternStep);
  } else {
    auto number = ParseUint64(step);
    if (!number || *number >= kExternStep) return MakeError("Invalid job id: " + word);
    request.set_step_id(static_cast<uint32_t>(*number));
  }
  return request;
}

std::vector<std::string> LocalNodes(const ClusterConfig& cluster, const std::string& host,
                                    const std::string& named) {
  if (!named.empty()) return {named};
  std::vector<std::string> nodes;
  for (const NodeConfig& node : cluster.nodes) {
    const std::string& name = node.hostname.empty() ? node.name : node.hostname;
    if (name == host || name == ShortName(host)) nodes.push_back(node.name);
  }
  if (!nodes.empty()) return nodes;
  for (const NodeConfig& node : cluster.nodes)
    if (ReadAgentAddress(AgentSpoolDir(cluster.settings, node.name)).ok())
      nodes.push_back(node.name);
  return nodes;
}

std::string StepIdText(uint32_t step_id) {
  if (step_id == kBatchStep) return "batch";
  if (step_id == kExternStep) return "extern";
  return std::to_string(step_id);
}

std::string PidsText(const v1::ListPidsReply& reply) {
  std::string text = fmt::format("{:<8} {:<8} {:<6} {:<7} {:<8}\n", "PID", "JOBID", "STEPID",
                                 "LOCALID", "GLOBALID");
  for (const v1::ListPidsReply::Pid& pid : reply.pids()) {
    bool task = pid.local_task() >= 0;
    text += fmt::format("{:<8} {:<8} {:<6} {:<7} {:<8}\n", pid.pid(), pid.job_id(),
                        StepIdText(pid.step_id()), task ? std::to_string(pid.local_task()) : "-",
                        task ? std::to_string(pid.global_task()) : "-");
  }
  return text;
}

std::string NoPidsText(const v1::ListPidsRequest& request) {
  if (request.job_id() == 0) return "No job steps exist on this node.";
  if (!request.has_step_id())
    return fmt::format("Job {} does not exist on this node.", request.job_id());
  return fmt::format("Job step {}.{} does not exist on this node.", request.job_id(),
                     StepIdText(request.step_id()));
}

std::string PidInfoText(uint64_t job_id, int64_t end_time, int64_t now) {
  std::time_t end = static_cast<std::time_t>(end_time);
  std::tm local{};
  localtime_r(&end, &local);
  char when[64] = {};
  std::strftime(when, sizeof when, "%a %b %d %H:%M:%S %Y", &local);
  return fmt::format("Slurm job id {} ends at {}\nslurm_get_rem_time is {}\n", job_id, when,
                     std::max<int64_t>(end_time - now, 0));
}

int64_t JobEndTime(const v1::Job& job) {
  bool running = job.state() == "RUNNING" || job.state() == "SUSPENDED";
  if (!running && job.end_time()) return job.end_time();
  int64_t limit = job.time_limit_seconds();
  if (limit <= 0 || limit == kUnlimitedSeconds) return job.start_time() + kYear;
  return job.start_time() + job.suspended_seconds() + limit;
}

std::string SlurmdStatusText(const v1::AgentStatusReply& status) {
  std::vector<std::string> active(status.active_steps().begin(), status.active_steps().end());
  std::string steps = active.empty() ? "NONE" : Join(active, ", ");
  std::string text;
  auto line = [&text](std::string_view name, const std::string& value) {
    text += fmt::format("{:<24} = {}\n", name, value);
  };
  line("Active Steps", steps);
  line("Actual CPUs", std::to_string(status.cpus()));
  line("Actual Boards", std::to_string(status.boards()));
  line("Actual sockets", std::to_string(status.sockets()));
  line("Actual cores", std::to_string(status.cores_per_socket()));
  line("Actual threads per core", std::to_string(status.threads_per_core()));
  line("Actual real memory", fmt::format("{} MB", status.real_memory_mb()));
  line("Actual temp disk space", fmt::format("{} MB", status.tmp_disk_mb()));
  line("Boot time", columns::IsoTime(status.boot_time()));
  line("Hostname", status.hostname());
  line("Last slurmctld msg time", status.last_controller_message()
                                      ? columns::IsoTime(status.last_controller_message())
                                      : "NONE");
  line("Slurmd PID", std::to_string(status.pid()));
  line("Slurmd Debug", std::to_string(status.debug_level()));
  line("Slurmd Logfile", status.log_file());
  line("Version", status.version());
  return text;
}

}  // namespace drover::cli::scontrol
