// Victim choice; see preemption.h. Per candidate node: what is free now plus what jobs in
// their grace time will give back, then the node's own preemptable jobs, cheapest first, until
// the request fits; the nodes are then ranked by what they cost and placed by the topology.
#include "sched/preemption.h"

#include <algorithm>
#include <map>

namespace drover::sched {
namespace {

Amount HeldOn(const ClusterConfig& cluster, const RunningJob& job, int node) {
  for (const NodeAllocation& part : job.held().nodes)
    if (part.node == node) return Held(cluster.nodes[node], part, job.held().exclusive);
  return {};
}

}  // namespace

PreemptMode VictimMode(const ClusterConfig& cluster, const std::vector<Qos>& qos, int partition,
                       const std::string& victim_qos) {
  const ClusterSettings& settings = cluster.settings;
  if (settings.preempt == PreemptType::kQos) {
    for (const Qos& entry : qos)
      if (entry.name == victim_qos && entry.preempt_mode) return *entry.preempt_mode;
    return settings.preempt_mode;
  }
  if (partition >= 0 && static_cast<size_t>(partition) < cluster.partitions.size())
    return cluster.partitions[partition].preempt_mode.value_or(settings.preempt_mode);
  return settings.preempt_mode;
}

int64_t VictimGraceSeconds(const ClusterConfig& cluster, const std::vector<Qos>& qos, int partition,
                           const std::string& victim_qos) {
  // A suspended victim stops at once: there is no grace to wait for.
  if (VictimMode(cluster, qos, partition, victim_qos).base == PreemptMode::Base::kSuspend) return 0;
  if (cluster.settings.preempt == PreemptType::kQos) {
    for (const Qos& entry : qos)
      if (entry.name == victim_qos) return entry.grace_time_seconds;
    return 0;
  }
  if (cluster.settings.preempt == PreemptType::kPartitionPriority && partition >= 0 &&
      static_cast<size_t>(partition) < cluster.partitions.size())
    return cluster.partitions[partition].grace_time_seconds;
  return 0;
}

Preemptor::Preemptor(const ClusterConfig& cluster, const Planner& planner, const NodePool& pool,
                     const std::vector<RunningJob>& running, const std::vector<Qos>& qos,
                     int64_t now)
    : cluster_(cluster),
      planner_(planner),
      pool_(pool),
      running_(running),
      qos_(qos),
      now_(now),
      on_node_(cluster.nodes.size()),
      in_grace_(running.size(), 0),
      release_(running.size(), 0) {
  for (size_t i = 0; i < running.size(); ++i) {
    in_grace_[i] = running[i].preempted;
    release_[i] = running[i].end_time;  // the controller moved a victim's end to its grace's
    for (const NodeAllocation& part : running[i].held().nodes) on_node_[part.node].push_back(i);
  }
}

bool Preemptor::MayPreempt(int partition, int qos, const RunningJob& victim) const {
  const ClusterSettings& settings = cluster_.settings;
  if (VictimMode(cluster_, qos_, victim.partition, victim.qos).base == PreemptMode::Base::kOff)
    return false;
  int64_t exempt = settings.preempt_exempt_seconds;
  if (settings.preempt == PreemptType::kPartitionPriority) {
    if (victim.partition < 0 || partition < 0) return false;
    if (cluster_.partitions[victim.partition].priority_tier >=
        cluster_.partitions[partition].priority_tier)
      return false;
  } else if (settings.preempt == PreemptType::kQos) {
    if (qos < 0 || victim.qos == qos_[qos].name) return false;
    const std::vector<std::string>& preempts = qos_[qos].preempt;
    if (std::find(preempts.begin(), preempts.end(), victim.qos) == preempts.end()) return false;
    for (const Qos& entry : qos_)
      if (entry.name == victim.qos && entry.preempt_exempt_seconds >= 0)
        exempt = entry.preempt_exempt_seconds;
  } else {
    return false;
  }
  return now_ - victim.start_time >= exempt;
}

int64_t Preemptor::ReleaseTime(size_t victim) const {
  const RunningJob& job = running_[victim];
  int64_t grace = VictimGraceSeconds(cluster_, qos_, job.partition, job.qos);
  return AddTime(now_, std::max<int64_t>(grace, 1));  // the plan's "now" is taken already
}

Preemptor::Cost Preemptor::CostOf(const RunningJob& victim) const {
  Cost cost;
  double elapsed = static_cast<double>(std::max<int64_t>(now_ - victim.start_time, 0));
  for (const NodeAllocation& part : victim.held().nodes) {
    double gpus = static_cast<double>(part.gpus.size());
    uint32_t shares = part.shares && !part.gpus.empty()
                          ? cluster_.nodes[part.node].gpu_shares(part.gpus.front())
                          : 0;
    if (shares) gpus = static_cast<double>(part.shares) / shares;  // the part it shares
    cost.gpu_seconds += gpus * elapsed;
    cost.cpu_seconds += static_cast<double>(part.cores.size()) * elapsed;
  }
  cost.priority = victim.priority;
  cost.start_time = victim.start_time;
  return cost;
}

Amount Preemptor::Released(const RunningJob& victim, int node) const {
  Amount held = HeldOn(cluster_, victim, node);
  // A suspended victim's processes are stopped, not gone: its memory stays taken.
  // So are its NVMe drives: its scratch stays on them.
  if (VictimMode(cluster_, qos_, victim.partition, victim.qos).base == PreemptMode::Base::kSuspend)
    held.memory_mb = held.nvme = 0;
  return held;
}

std::optional<PreemptionPlan> Preemptor::Plan(int partition, int qos, const NodeRequest& need,
                                              int count, const std::vector<int>& nodes,
                                              const PlacementRequest& placement) const {
  struct NodeChoice {
    double gpu_seconds = 0, cpu_seconds = 0;
    int node = 0;
    int64_t ready = 0;  // when the resources are all back
    std::vector<size_t> victims;
  };
  std::vector<NodeChoice> choices;
  bool any_victim = false;
  for (int node : nodes) {
    // Nodes the plan has promised (to a reservation) are left alone: preempting there would
    // free resources the preemptor could not have.
    if (!pool_.usable(node) || planner_.HasTakes(node)) continue;
    Amount wanted = planner_.NeedOn(node, need);
    Amount free{pool_.free_cores(node), static_cast<int64_t>(pool_.free_memory(node)),
                pool_.planned_free_gpus(node), pool_.free_shares(node), pool_.free_nvme(node)};
    NodeChoice choice;
    choice.node = node;
    choice.ready = now_;
    std::vector<size_t> preemptable;
    for (size_t victim : on_node_[node]) {
      const RunningJob& job = running_[victim];
      if (in_grace_[victim]) {
        free += Released(job, node);
        choice.ready = std::max(choice.ready, release_[victim]);
      } else if (MayPreempt(partition, qos, job)) {
        preemptable.push_back(victim);
      }
    }
    std::sort(preemptable.begin(), preemptable.end(), [&](size_t a, size_t b) {
      return CostOf(running_[a]).Key() < CostOf(running_[b]).Key();
    });
    for (size_t k = 0; k < preemptable.size() && !free.Holds(wanted); ++k) {
      const RunningJob& job = running_[preemptable[k]];
      free += Released(job, node);
      Cost cost = CostOf(job);
      choice.gpu_seconds += cost.gpu_seconds;
      choice.cpu_seconds += cost.cpu_seconds;
      choice.ready = std::max(choice.ready, ReleaseTime(preemptable[k]));
      choice.victims.push_back(preemptable[k]);
    }
    if (!free.Holds(wanted)) continue;
    any_victim = any_victim || !choice.victims.empty();
    choices.push_back(std::move(choice));
  }
  if (!any_victim || static_cast<int>(choices.size()) < count) return std::nullopt;
  std::sort(choices.begin(), choices.end(), [](const NodeChoice& a, const NodeChoice& b) {
    return std::tie(a.gpu_seconds, a.cpu_seconds, a.ready, a.node) <
           std::tie(b.gpu_seconds, b.cpu_seconds, b.ready, b.node);
  });
  std::vector<int> candidates;
  std::map<int, const NodeChoice*> by_node;
  for (const NodeChoice& choice : choices) {
    candidates.push_back(choice.node);
    by_node[choice.node] = &choice;
  }
  // The cheapest nodes that the topology can place the job on: a growing prefix of the ranking.
  std::optional<std::vector<int>> chosen;
  for (size_t k = static_cast<size_t>(count);; k = std::min(candidates.size(), 2 * k)) {
    std::vector<int> prefix(candidates.begin(), candidates.begin() + k);
    if ((chosen = ChooseNodes(cluster_, prefix, placement)) || k == candidates.size()) break;
  }
  if (!chosen) return std::nullopt;
  PreemptionPlan plan;
  plan.place.start = now_;
  plan.place.nodes = *chosen;
  for (int node : *chosen) {
    const NodeChoice& choice = *by_node[node];
    plan.place.start = std::max(plan.place.start, choice.ready);
    for (size_t victim : choice.victims)
      if (std::find(plan.victims.begin(), plan.victims.end(), victim) == plan.victims.end())
        plan.victims.push_back(victim);
  }
  if (plan.victims.empty()) return std::nullopt;  // it waits for jobs already going
  return plan;
}

void Preemptor::Preempted(const std::vector<size_t>& victims) {
  for (size_t victim : victims) {
    in_grace_[victim] = 1;
    release_[victim] = ReleaseTime(victim);
  }
}

}  // namespace drover::sched
