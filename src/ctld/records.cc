// Conversions between the engine's records and drover.proto's messages (see records.h). Reading
// a record back is strict about what the configuration must contain, because a store written
// under another slurm.conf would otherwise index past the end of its nodes or partitions.
#include "ctld/records.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include "common/hostlist.h"
#include "common/text.h"
#include "ctld/views/jobs.h"
#include "ctld/views/nodes.h"
#include "ctld/views/reservations.h"
#include "wire/job_spec_codec.h"
#include "wire/node_codec.h"
#include "wire/repeated.h"
#include "wire/reservation_codec.h"
#include "wire/usage_codec.h"

namespace drover::ctld {
namespace {

using wire::Assign;
using wire::FromProto;
using wire::ToProto;
using wire::ToVector;

using sched::PendingReason;

// The last enumerator: lookups walk every value up to it.
constexpr PendingReason kLastReason = sched::kLastPendingReason;

PendingReason ParseReason(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(kLastReason); ++i) {
    auto reason = static_cast<PendingReason>(i);
    if (sched::PendingReasonName(reason) == name) return reason;
  }
  return PendingReason::kNone;  // a reason only explains a wait; losing it is harmless
}

std::string Mismatch(uint64_t job_id, std::string_view what) {
  return fmt::format("job {}: {}: the store does not match this configuration", job_id, what);
}

Result<JobState> StateFromProto(const std::string& name, uint64_t job_id) {
  std::optional<JobState> state = ParseJobState(name);
  if (!state) {
    return MakeError(fmt::format("job {}: unknown state '{}' in the store", job_id, name));
  }
  return *state;
}

Status CheckNode(int node, const ClusterConfig& cluster, uint64_t job_id) {
  if (node >= 0 && static_cast<size_t>(node) < cluster.nodes.size()) return OkStatus();
  return MakeError(Mismatch(
      job_id, fmt::format("node index {} in the store is out of range ({} nodes configured)", node,
                          cluster.nodes.size())));
}

void ToProto(const sched::NodeAllocation& node, v1::NodeAllocation* out) {
  out->set_node(node.node);
  Assign(node.cores, out->mutable_cores());
  out->set_memory_mb(node.memory_mb);
  Assign(node.gpus, out->mutable_gpus());
  out->set_shares(node.shares);
  Assign(node.nvme, out->mutable_nvme());
}

sched::NodeAllocation FromProto(const v1::NodeAllocation& node) {
  return {node.node(),   ToVector<int>(node.cores()), node.memory_mb(), ToVector<int>(node.gpus()),
          node.shares(), ToVector<int>(node.nvme())};
}

void ToProto(const JobRun& run, v1::JobRun* out) {
  out->set_start_time(run.start_time);
  out->set_end_time(run.end_time);
  out->set_state(std::string(JobStateName(run.state)));
  out->set_exit_code(run.exit_code);
  out->set_exit_signal(run.exit_signal);
  Assign(run.nodes, out->mutable_nodes());
  out->set_restart_count(run.restart_count);
}

Result<JobRun> FromProto(const v1::JobRun& run, const ClusterConfig& cluster, uint64_t job_id) {
  Result<JobState> state = StateFromProto(run.state(), job_id);
  if (!state) return std::move(state).take_error();
  for (int node : run.nodes()) {
    if (Status s = CheckNode(node, cluster, job_id); !s) return std::move(s).take_error();
  }
  return JobRun{run.start_time(),   run.end_time(),    *state,
                run.exit_code(),    run.exit_signal(), ToVector<int>(run.nodes()),
                run.restart_count()};
}

using views::NodeList;
using views::PartitionName;

// Everything in v1::Job besides the spec, the allocation and the history.
void ScalarsToProto(const Job& job, v1::Job* out) {
  out->set_state(std::string(JobStateName(job.state)));
  out->set_reason(std::string(sched::PendingReasonName(job.reason)));
  out->set_partition(job.partition);
  out->set_exclusive(job.allocation.exclusive);
  out->set_start_time(job.start_time);
  out->set_end_time(job.end_time);
  out->set_time_limit_seconds(job.time_limit_seconds);
  out->set_exit_code(job.exit_code);
  out->set_exit_signal(job.exit_signal);
  out->set_restart_count(job.restart_count);
  out->set_cancel_requested_at(job.cancel_requested_at);
  out->set_cancelled_by(job.cancelled_by);
  out->set_time_limit_signalled_at(job.time_limit_signalled_at);
  out->set_suspend_time(job.suspend_time);
  out->set_suspended_seconds(job.suspended_seconds);
  out->set_preempted_at(job.preempted_at);
  out->set_preempt_deadline(job.preempt_deadline);
  out->set_preempt_cancel(job.preempt_cancel);
  out->set_cpu_seconds(job.cpu_seconds);
  out->set_max_rss_mib(job.max_rss_mib);
  wire::ToProto(job.batch_usage, out->mutable_batch_usage());
  out->set_user_signal_sent(job.user_signal_sent);
  out->set_next_step_id(job.next_step_id);
  out->set_released(job.released);
  out->set_release_exit_code(job.release_exit_code);
  out->set_release_signal(job.release_signal);
  out->set_sched_by(job.sched_by);
}

void ScalarsFromProto(const v1::Job& job, Job* out) {
  out->reason = ParseReason(job.reason());
  out->partition = job.partition();
  out->allocation.exclusive = job.exclusive();
  out->start_time = job.start_time();
  out->end_time = job.end_time();
  out->time_limit_seconds = job.time_limit_seconds();
  out->exit_code = job.exit_code();
  out->exit_signal = job.exit_signal();
  out->restart_count = job.restart_count();
  out->cancel_requested_at = job.cancel_requested_at();
  out->cancelled_by = job.cancelled_by();
  out->time_limit_signalled_at = job.time_limit_signalled_at();
  out->suspend_time = job.suspend_time();
  out->suspended_seconds = job.suspended_seconds();
  out->preempted_at = job.preempted_at();
  out->preempt_deadline = job.preempt_deadline();
  out->preempt_cancel = job.preempt_cancel();
  out->cpu_seconds = job.cpu_seconds();
  out->max_rss_mib = job.max_rss_mib();
  out->batch_usage = wire::FromProto(job.batch_usage());
  out->user_signal_sent = job.user_signal_sent();
  out->next_step_id = job.next_step_id();
  out->released = job.released();
  out->release_exit_code = job.release_exit_code();
  out->release_signal = job.release_signal();
  out->sched_by = job.sched_by();
}

// The job's place in the configuration: partition and allocated nodes.
Status PlacementFromProto(const v1::Job& job, const ClusterConfig& cluster, Job* out) {
  const uint64_t id = out->spec.job_id;
  if (job.partition() < -1 || job.partition() >= static_cast<int>(cluster.partitions.size())) {
    return MakeError(Mismatch(
        id,
        fmt::format("partition index {} in the store is out of range ({} partitions configured)",
                    job.partition(), cluster.partitions.size())));
  }
  for (const v1::NodeAllocation& node : job.allocation()) {
    if (Status s = CheckNode(node.node(), cluster, id); !s) return s;
    out->allocation.nodes.push_back(FromProto(node));
    if (node.gpu_uuids_size() > 0)
      out->gpu_uuids[node.node()].assign(node.gpu_uuids().begin(), node.gpu_uuids().end());
  }
  if (!job.batch_host().empty()) out->batch_node = cluster.FindNode(job.batch_host());
  return OkStatus();
}

}  // namespace

void ToProto(const Job& job, const ClusterConfig& cluster, v1::Job* out) {
  ToProto(job.spec, out->mutable_spec());
  ScalarsToProto(job, out);
  for (const sched::NodeAllocation& node : job.allocation.nodes) {
    v1::NodeAllocation* part = out->add_allocation();
    ToProto(node, part);
    if (auto uuids = job.gpu_uuids.find(node.node); uuids != job.gpu_uuids.end())
      for (const std::string& uuid : uuids->second) part->add_gpu_uuids(uuid);
  }
  for (const JobRun& run : job.history) ToProto(run, out->add_history());
  for (const Step& step : job.steps) {
    v1::Step* s = out->add_steps();
    s->set_step_id(step.step_id);
    s->set_name(step.name);
    s->set_start_time(step.start_time);
    s->set_end_time(step.end_time);
    s->set_state(std::string(JobStateName(step.state)));
    s->set_exit_code(step.exit_code);
    s->set_exit_signal(step.exit_signal);
    s->set_ntasks(step.ntasks);
    for (int node : step.nodes) s->add_nodes(node);
    std::vector<std::string> names;
    for (int node : step.nodes)
      if (node >= 0 && static_cast<size_t>(node) < cluster.nodes.size())
        names.push_back(cluster.nodes[node].name);
    s->set_node_list(CompressHostlist(names));
    s->set_cpus(step.cpus);
    s->set_cpu_seconds(step.cpu_seconds);
    s->set_max_rss_mib(step.max_rss_mib);
    wire::ToProto(step.task_usage, s->mutable_task_usage());
    for (const sched::NodeAllocation& part : step.usage) ToProto(part, s->add_usage());
    s->set_overlap(step.overlap);
    s->set_gpus_given(step.gpus_given);
  }
  out->set_partition_name(PartitionName(job.partition, cluster));
  out->set_node_list(NodeList(job.allocation, cluster));
  if (job.batch_node >= 0 && static_cast<size_t>(job.batch_node) < cluster.nodes.size() &&
      !job.allocation.nodes.empty())
    out->set_batch_host(cluster.nodes[job.batch_node].name);
}

std::shared_ptr<const std::string> EncodeJob(const Job& job, const ClusterConfig& cluster) {
  v1::Job record;
  ToProto(job, cluster, &record);
  return std::make_shared<const std::string>(record.SerializeAsString());
}

std::shared_ptr<const std::string> CachedJob(const Job& job, const ClusterConfig& cluster) {
  if (const auto& bytes = job.wire.get()) return bytes;
  return EncodeJob(job, cluster);  // a record the engine has not encoded (none yet; for safety)
}

Result<Job> FromProto(const v1::Job& job, const ClusterConfig& cluster) {
  Result<JobSpec> spec = FromProto(job.spec());
  if (!spec) return std::move(spec).take_error();
  Job out;
  out.spec = std::move(spec).value();
  Result<JobState> state = StateFromProto(job.state(), out.spec.job_id);
  if (!state) return std::move(state).take_error();
  out.state = *state;
  ScalarsFromProto(job, &out);
  if (Status s = PlacementFromProto(job, cluster, &out); !s) return std::move(s).take_error();
  for (const v1::JobRun& run : job.history()) {
    Result<JobRun> r = FromProto(run, cluster, out.spec.job_id);
    if (!r) return std::move(r).take_error();
    out.history.push_back(std::move(r).value());
  }
  for (const v1::Step& s : job.steps()) {
    Step step;
    step.step_id = s.step_id();
    step.name = s.name();
    step.start_time = s.start_time();
    step.end_time = s.end_time();
    Result<JobState> step_state = StateFromProto(s.state(), out.spec.job_id);
    if (!step_state) return std::move(step_state).take_error();
    step.state = *step_state;
    step.exit_code = s.exit_code();
    step.exit_signal = s.exit_signal();
    step.ntasks = s.ntasks();
    for (int node : s.nodes()) {
      if (node < 0 || static_cast<size_t>(node) >= cluster.nodes.size())
        return MakeError(
            fmt::format("job {}: step {} names node {}, which the configuration "
                        "does not have",
                        out.spec.job_id, s.step_id(), node));
      step.nodes.push_back(node);
    }
    step.cpus = s.cpus();
    step.cpu_seconds = s.cpu_seconds();
    step.max_rss_mib = s.max_rss_mib();
    step.task_usage = wire::FromProto(s.task_usage());
    for (const v1::NodeAllocation& part : s.usage()) step.usage.push_back(FromProto(part));
    step.overlap = s.overlap();
    step.gpus_given = s.gpus_given();
    out.steps.push_back(std::move(step));
  }
  return out;
}

namespace {

// scontrol's feature lists as stored: "=" and the list, so that an empty list ("=", features
// removed) differs from none set ("").
std::string StoredFeatures(const std::optional<std::vector<std::string>>& features) {
  return features ? "=" + Join(*features, ",") : "";
}

std::optional<std::vector<std::string>> FeaturesStored(const std::string& text) {
  if (!text.starts_with('=')) return std::nullopt;
  std::vector<std::string> features;
  for (const std::string& item : Split(text.substr(1), ','))
    if (!item.empty()) features.push_back(item);
  return features;
}

}  // namespace

void ToProto(const NodeStatus& node, const std::string& name, v1::NodeStatus* out) {
  wire::ToProto(views::NodeInfoOf(node, name, false), out);
  // What scontrol set over slurm.conf, not what is in force.
  out->set_weight(node.weight.value_or(0));
  out->set_features(StoredFeatures(node.features));
  out->set_active_features(StoredFeatures(node.active_features));
}

NodeStatus FromProto(const v1::NodeStatus& node) {
  NodeStatus out;
  out.registered = node.registered();
  out.down = node.down();
  out.drain = node.drain();
  out.drained_by_health = node.drained_by_health();
  out.health_latched = node.health_latched();
  out.not_responding = node.not_responding();
  out.reason = node.reason();
  out.reason_time = node.reason_time();
  out.reason_uid = node.reason_uid();
  out.last_heard = node.last_heard();
  out.jobs.insert(node.jobs().begin(), node.jobs().end());
  out.fail = node.state().starts_with("FAIL");
  if (node.weight()) out.weight = node.weight();
  out.features = FeaturesStored(node.features());
  out.active_features = FeaturesStored(node.active_features());
  out.comment = node.comment();
  out.extra = node.extra();
  // The reboot in progress: its state flag; reason_time is when it was issued.
  out.reboot_requested = node.reboot_requested();
  out.reboot_issued = node.state().find("+REBOOT_ISSUED") != std::string::npos;
  out.next_state = node.next_state();
  out.boot_time = node.boot_time();
  return out;
}

void ToProto(const Reservation& reservation, const ClusterConfig& cluster, v1::Reservation* out) {
  wire::ToProto(views::ReservationInfoOf(reservation, cluster), out);
}

Result<Reservation> FromProto(const v1::Reservation& reservation, const ClusterConfig& cluster) {
  Reservation out;
  out.name = reservation.name();
  out.start_time = reservation.start_time();
  out.end_time = reservation.end_time();
  for (const std::string& name : reservation.nodes()) {
    int index = cluster.FindNode(name);
    if (index < 0)
      return MakeError(fmt::format(
          "reservation {} names node {}, which slurm.conf no longer has; delete the reservation "
          "or restore the node",
          out.name, name));
    out.nodes.push_back(index);
  }
  std::sort(out.nodes.begin(), out.nodes.end());
  out.users.assign(reservation.users().begin(), reservation.users().end());
  out.accounts.assign(reservation.accounts().begin(), reservation.accounts().end());
  out.flags.insert(reservation.flags().begin(), reservation.flags().end());
  out.partition = reservation.partition();
  out.tres = reservation.tres();
  out.created_by = reservation.created_by();
  return out;
}

std::string JobKey(uint64_t id) {
  return fmt::format("{:020d}", id);
}

namespace {
std::string EndOf(int64_t end_time) {
  return fmt::format("{:012d}", std::clamp<int64_t>(end_time, 0, kHistoryNoEnd));
}
}  // namespace

std::string HistoryGroupPrefix(uint64_t group) {
  return fmt::format("a/{:020d}/", group);
}

std::string HistoryUserPrefix(uint32_t uid) {
  return fmt::format("u/{:010d}/", uid);
}

std::string HistoryTimeKey(std::string prefix, int64_t end_time) {
  return prefix + EndOf(end_time);
}

std::vector<std::string> HistoryIndexKeys(uint64_t job_id, uint64_t array_job_id, uint32_t uid,
                                          int64_t end_time) {
  std::string id = JobKey(job_id);
  std::string end = EndOf(end_time ? end_time : kHistoryNoEnd);
  return {HistoryGroupPrefix(array_job_id ? array_job_id : job_id) + id,
          HistoryUserPrefix(uid) + end + "/" + id,
          std::string(kHistoryTimePrefix) + end + "/" + id};
}

uint64_t HistoryIndexJobId(std::string_view key) {
  if (key.size() < 21 || key[key.size() - 21] != '/') return 0;
  uint64_t id = 0;
  for (char digit : key.substr(key.size() - 20)) {
    if (digit < '0' || digit > '9') return 0;
    id = id * 10 + static_cast<uint64_t>(digit - '0');
  }
  return id;
}

std::string EncodeEnvironment(const std::vector<std::string>& environment) {
  std::string stored;
  for (const std::string& entry : environment) {
    stored += entry;
    stored += '\0';
  }
  return stored;
}

std::vector<std::string> DecodeEnvironment(const std::string& stored) {
  std::vector<std::string> environment;
  for (size_t begin = 0, end; (end = stored.find('\0', begin)) != std::string::npos;
       begin = end + 1)
    environment.push_back(stored.substr(begin, end - begin));
  return environment;
}

}  // namespace drover::ctld
