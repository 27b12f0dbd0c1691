// See priorities.h.
#include "ctld/views/priorities.h"

#include <algorithm>
#include <unordered_map>

#include "ctld/views/privacy.h"

namespace drover::ctld::views {
namespace {

bool Selected(const JobSpec& spec, const JobFilter& filter) {
  if (!filter.job_ids.empty() &&
      std::find(filter.job_ids.begin(), filter.job_ids.end(), spec.job_id) == filter.job_ids.end())
    return false;
  if (filter.uid && spec.uid != *filter.uid) return false;
  return filter.user.empty() || spec.user == filter.user;
}

wire::JobPriorityInfo PriorityOf(const JobSpec& spec, const sched::PriorityFactors& factors,
                                 const ClusterConfig& cluster) {
  wire::JobPriorityInfo info;
  info.job_id = spec.job_id;
  info.user = spec.user;
  info.account = spec.account;
  int p = spec.partitions.empty() ? cluster.DefaultPartition()
                                  : cluster.FindPartition(spec.partitions.front());
  info.partition = p >= 0 ? cluster.partitions[p].name : "";
  info.priority = factors.priority;
  info.age = factors.age;
  info.fairshare = factors.fairshare;
  info.job_size = factors.job_size;
  info.partition_factor = factors.partition;
  info.qos = factors.qos;
  info.assoc = factors.assoc;
  info.nice = factors.nice;
  info.tres = factors.tres;
  return info;
}

}  // namespace

wire::PriorityListing ListPriorities(const Snapshot& snapshot, const Caller& caller,
                                     const JobFilter& asked) {
  const ClusterConfig& cluster = *snapshot.cluster;
  const JobFilter filter = VisibleJobs(asked, caller, cluster.settings);
  std::unordered_map<uint64_t, const Job*> jobs;
  for (const JobPtr& job : snapshot.jobs) jobs[job->spec.job_id] = job.get();
  wire::PriorityListing listing;
  for (const sched::PriorityFactors& factors : *snapshot.priorities) {
    auto it = jobs.find(factors.job_id);
    if (it == jobs.end() || it->second->state != JobState::kPending) continue;
    const JobSpec& spec = it->second->spec;
    if (spec.hold != HoldKind::kNone || !Selected(spec, filter)) continue;
    listing.jobs.push_back(PriorityOf(spec, factors, cluster));
  }
  const ClusterSettings& s = cluster.settings;
  listing.weights = {{"age", s.weight_age},          {"fairshare", s.weight_fairshare},
                     {"jobsize", s.weight_job_size}, {"partition", s.weight_partition},
                     {"qos", s.weight_qos},          {"assoc", s.weight_assoc}};
  return listing;
}

std::vector<wire::ShareInfo> ListShares(const Snapshot& snapshot, const Caller& caller) {
  const auto& tree = snapshot.associations;
  const sched::FairShare& fair = *snapshot.fair_share;
  auto at = [](const std::vector<double>& values, size_t i) {
    return i < values.size() ? values[i] : 0.0;
  };
  // An account's RawUsage is its subtree's, as sshare shows it: children come after their
  // parent, so a reverse walk sums each subtree before adding it to its parent.
  std::vector<double> raw(tree.size());
  for (size_t i = tree.size(); i-- > 0;) {
    raw[i] += tree[i].usage;
    if (tree[i].parent >= 0 && static_cast<size_t>(tree[i].parent) < i)
      raw[tree[i].parent] += raw[i];
  }
  std::vector<wire::ShareInfo> shares;
  for (size_t i = 0; i < tree.size(); ++i) {
    wire::ShareInfo share;
    share.account = tree[i].account;
    share.user = tree[i].user;
    if (tree[i].parent >= 0) share.parent = tree[tree[i].parent].account;
    share.raw_shares = tree[i].shares;
    share.raw_usage = raw[i];
    share.norm_shares = at(fair.norm_shares, i);
    share.norm_usage = at(fair.norm_usage, i);
    share.effective_usage = at(fair.effective_usage, i);
    share.level_fs = at(fair.level_fs, i);
    share.fairshare = at(fair.factor, i);
    if (SeesShare(share, caller, snapshot.cluster->settings)) shares.push_back(std::move(share));
  }
  return shares;
}

}  // namespace drover::ctld::views
