// scontrol top: moves pending jobs ahead of their owner's other pending jobs of the same
// partition, account and QOS. As in Slurm it works through nice: the group's current priorities
// are dealt out again, the highest to the listed jobs in the order given, the rest to the other
// jobs in their present order, and each job's nice absorbs the difference. The group's total
// priority does not grow (beyond keeping every priority at 1 or more), so no user gains on
// anyone else.
#include <algorithm>
#include <limits>
#include <optional>

#include "ctld/engine/engine.h"

namespace drover::ctld {
namespace {

// Slurm's nice range (NICE_OFFSET less a margin).
constexpr int64_t kMaxNice = 2147483645;

// What a job must share with the listed ones to be reordered with them.
struct GroupKey {
  std::string user, partition, account, qos;
  bool operator==(const GroupKey&) const = default;
};

std::optional<GroupKey> KeyOf(const Job& job, const ClusterConfig& cluster) {
  if (job.spec.partitions.size() > 1) return std::nullopt;  // only single-partition jobs move
  std::string partition =
      job.spec.partitions.empty()
          ? (cluster.DefaultPartition() >= 0 ? cluster.partitions[cluster.DefaultPartition()].name
                                             : "")
          : job.spec.partitions.front();
  return GroupKey{job.spec.user, partition, job.spec.account, job.spec.qos};
}

Reply Refuse(uint64_t token, std::string message) {
  return Reply{token, false, std::move(message), {}, {}};
}

// Why the caller may not reorder jobs under this configuration; "" when it may.
std::string TopRefusal(const ClusterConfig& config, const Caller& caller) {
  if (config.settings.priority != PriorityType::kMultifactor)
    return "scontrol top needs PriorityType=priority/multifactor (under priority/basic jobs "
           "start in submission order)";
  bool admin = IsOperator(caller);
  if (!admin && !config.settings.scheduler_params.enable_user_top)
    return "Access/permission denied (scontrol top is for operators unless SchedulerParameters "
           "has enable_user_top)";
  return "";
}

// The group's priorities, highest first, made strictly decreasing so that the order holds even
// where priorities tie (as they do for jobs that have not started to age): the group loses a
// little. Priorities stay at 1 or more (the least a pending job shows), which may lift the
// lowest few.
std::vector<int64_t> DealtPriorities(const std::vector<std::pair<uint64_t, int64_t>>& group) {
  std::vector<int64_t> pool;
  for (const auto& [id, priority] : group) pool.push_back(priority);
  std::sort(pool.begin(), pool.end(), std::greater<>());
  for (size_t i = 1; i < pool.size(); ++i) pool[i] = std::min(pool[i], pool[i - 1] - 1);
  for (size_t i = pool.size(); i-- > 0;)
    pool[i] = std::max(pool[i], i + 1 < pool.size() ? pool[i + 1] + 1 : int64_t{1});
  return pool;
}

}  // namespace

std::optional<std::vector<uint64_t>> Engine::TopListed(const TopJobs& event,
                                                       EngineOutput& out) const {
  std::vector<uint64_t> listed;
  std::optional<GroupKey> group;
  for (const auto& [id, task] : event.jobs) {
    uint64_t job_id = id;
    if (task != kNoArrayTask) {
      auto it = array_tasks_.find({id, task});
      job_id = it == array_tasks_.end() ? 0 : it->second;
    }
    const Job* job = FindJob(job_id);
    std::string refusal = !job                               ? "Invalid job id specified"
                          : !MayAct(event.caller, *job)      ? "Access/permission denied"
                          : job->state != JobState::kPending ? "Job is no longer pending execution"
                                                             : "";
    if (!refusal.empty()) {
      out.effects.push_back(Refuse(event.token, std::move(refusal)));
      return std::nullopt;
    }
    std::optional<GroupKey> key = KeyOf(*job, cluster());
    if (!key) continue;  // as Slurm: jobs of several partitions are left as they are
    if (!group) group = key;
    if (*key == *group && std::find(listed.begin(), listed.end(), job_id) == listed.end())
      listed.push_back(job_id);
  }
  return listed;
}

namespace {

int64_t PriorityOf(const sched::PriorityCalculator& calculator, const ClusterConfig& config,
                   const Job& job) {
  int p = job.spec.partitions.empty() ? config.DefaultPartition()
                                      : config.FindPartition(job.spec.partitions.front());
  return calculator.Compute(job.spec, p).priority;
}

}  // namespace

int64_t Engine::PriorityNow(const Job& job) const {
  sched::PriorityCalculator calculator(cluster(), associations_, *fair_share_, qos_, clock_.Now(),
                                       &Totals());
  return PriorityOf(calculator, cluster(), job);
}

std::vector<std::pair<uint64_t, int64_t>> Engine::TopGroup(
    const std::vector<uint64_t>& listed) const {
  const ClusterConfig& config = cluster();
  // The group's priorities as the next cycle would compute them now.
  sched::PriorityCalculator calculator(config, associations_, *fair_share_, qos_, clock_.Now(),
                                       &Totals());
  auto priority_of = [&](const Job& job) { return PriorityOf(calculator, config, job); };
  struct Member {
    uint64_t id;
    int64_t priority;
    int64_t submit_time;
  };
  std::vector<std::pair<uint64_t, int64_t>> group;
  for (uint64_t id : listed) group.emplace_back(id, priority_of(*FindJob(id)));
  const GroupKey key = *KeyOf(*FindJob(listed.front()), config);
  std::vector<Member> others;
  for (const auto& [id, job] : jobs_) {
    if (job->state != JobState::kPending ||
        std::find(listed.begin(), listed.end(), id) != listed.end())
      continue;
    if (std::optional<GroupKey> other = KeyOf(*job, config); other && *other == key)
      others.push_back({id, priority_of(*job), job->spec.submit_time});
  }
  std::sort(others.begin(), others.end(), [](const Member& a, const Member& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.submit_time != b.submit_time) return a.submit_time < b.submit_time;
    return a.id < b.id;
  });
  for (const Member& m : others) group.emplace_back(m.id, m.priority);
  return group;
}

void Engine::On(const TopJobs& event, EngineOutput& out) {
  if (std::string refusal = TopRefusal(cluster(), event.caller); !refusal.empty())
    return out.effects.push_back(Refuse(event.token, std::move(refusal)));
  std::optional<std::vector<uint64_t>> listed = TopListed(event, out);
  if (!listed) return;
  if (listed->empty())
    return out.effects.push_back(Refuse(
        event.token, "scontrol top moves jobs submitted to one partition only: none was given"));
  // Listed jobs first, in the order given, then the rest of the group in its present order.
  std::vector<std::pair<uint64_t, int64_t>> order = TopGroup(*listed);
  std::vector<int64_t> pool = DealtPriorities(order);
  for (size_t i = 0; i < order.size(); ++i) {
    int64_t delta = order[i].second - pool[i];
    if (delta == 0) continue;
    Job& job = Mutable(order[i].first, out);
    job.spec.nice = static_cast<int32_t>(
        std::clamp<int64_t>(int64_t{job.spec.nice} + delta, -kMaxNice, kMaxNice));
  }
  out.effects.push_back(Reply{event.token, true, "", *listed, {}});
  schedule_requested_ = true;
}

}  // namespace drover::ctld
