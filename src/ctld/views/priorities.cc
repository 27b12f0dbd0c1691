// See priorities.h.
#include "ctld/views/priorities.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

#include "common/accounting_settings.h"
#include "common/tres.h"
#include "ctld/views/jobs.h"
#include "ctld/views/privacy.h"
#include "sched/billing.h"
#include "sched/limits.h"

namespace drover::ctld::views {
namespace {

// The filter's user; the jobs it names are chosen before (NamedJobs).
bool Selected(const JobSpec& spec, const JobFilter& filter) {
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
  // Jobs asked for by ID (squeue -j, scontrol show job N): only theirs, found by ID.
  const bool by_id = !filter.job_ids.empty() || !filter.array_tasks.empty();
  std::vector<uint64_t> named;  // by ID
  if (by_id)
    for (const JobPtr& job : NamedJobs(snapshot, filter)) named.push_back(job->spec.job_id);
  wire::PriorityListing listing;
  const std::vector<sched::PriorityFactors>& factors = *snapshot.priorities;
  auto add = [&](const sched::PriorityFactors& job_factors) {
    const JobPtr* job = snapshot.jobs.Find(job_factors.job_id);
    if (!job || (*job)->state != JobState::kPending) return;
    const JobSpec& spec = (*job)->spec;
    if (spec.hold != HoldKind::kNone || !Selected(spec, filter)) return;
    listing.jobs.push_back(PriorityOf(spec, job_factors, cluster));
  };
  if (!by_id) {
    for (const sched::PriorityFactors& job_factors : factors) add(job_factors);
  } else if (const std::vector<uint32_t>* index = snapshot.priority_by_id.get()) {
    // Each named job's factors through the cycle's index by ID, listed in priority order. (Before
    // the first cycle there are neither factors nor an index.)
    auto id_at = [&](uint32_t place) { return factors[place].job_id; };
    std::vector<uint32_t> places;
    for (uint64_t id : named) {
      auto it =
          std::lower_bound(index->begin(), index->end(), id,
                           [&](uint32_t place, uint64_t want) { return id_at(place) < want; });
      if (it != index->end() && id_at(*it) == id) places.push_back(*it);
    }
    std::sort(places.begin(), places.end());
    for (uint32_t place : places) add(factors[place]);
  }
  const ClusterSettings& s = cluster.settings;
  listing.weights = {{"age", s.weight_age},          {"fairshare", s.weight_fairshare},
                     {"jobsize", s.weight_job_size}, {"partition", s.weight_partition},
                     {"qos", s.weight_qos},          {"assoc", s.weight_assoc}};
  return listing;
}

namespace {

// TRES-seconds as sshare prints TRES-minutes: every TRES Slurm counts by default, in its
// order, gres/gpu when the cluster has GPUs.
std::string TresMinutes(const sched::TresSeconds& seconds, bool gpus) {
  auto minutes = [](double value) { return static_cast<uint64_t>(std::max(0.0, value) / 60.0); };
  std::string text = fmt::format(
      "cpu={},mem={},energy=0,node={},billing={},fs/disk=0,vmem=0,pages=0", minutes(seconds.cpu),
      minutes(seconds.mem), minutes(seconds.node), minutes(seconds.billing));
  if (gpus) text += fmt::format(",gres/gpu={}", minutes(seconds.gpu));
  return text;
}

}  // namespace

std::vector<wire::ShareInfo> ListShares(const Snapshot& snapshot, const Caller& caller) {
  const auto& tree = snapshot.associations;
  const ClusterConfig& cluster = *snapshot.cluster;
  bool gpus = std::any_of(cluster.nodes.begin(), cluster.nodes.end(),
                          [](const NodeConfig& node) { return !node.gpus.empty(); });
  // TRESRunMins: each running job's TRES times what is left of its time limit, in its
  // association and every ancestor; GrpTRESRaw: the decayed usage, summed the same way.
  std::map<std::pair<std::string, std::string>, size_t> index;
  for (size_t i = 0; i < tree.size(); ++i) index[{tree[i].account, tree[i].user}] = i;
  std::vector<sched::TresSeconds> run(tree.size()), used(tree.size());
  for (const JobPtr& job : snapshot.jobs) {
    if (job->state != JobState::kRunning && job->state != JobState::kSuspended) continue;
    auto found = index.find({job->spec.account, job->spec.user});
    if (found == index.end() || job->end_time >= kUnlimitedSeconds) continue;
    double left = static_cast<double>(std::max<int64_t>(job->end_time - snapshot.time, 0));
    sched::JobUsage usage = sched::UsageOf(cluster, job->allocation);
    static const std::vector<std::pair<std::string, double>> kNoWeights;
    bool known =
        job->partition >= 0 && static_cast<size_t>(job->partition) < cluster.partitions.size();
    // Without weights BillingOf is the CPU count, as Slurm's billing TRES.
    double billing =
        sched::BillingOf(known ? cluster.partitions[job->partition].billing_weights : kNoWeights,
                         usage, job->spec.gpu_type);
    run[found->second].Add(sched::TresSecondsOf(usage, billing, left));
  }
  for (size_t i = 0; i < tree.size(); ++i) used[i].Add(tree[i].used);
  for (size_t i = tree.size(); i-- > 0;) {
    if (tree[i].parent < 0 || static_cast<size_t>(tree[i].parent) >= i) continue;
    run[tree[i].parent].Add(run[i]);
    used[tree[i].parent].Add(used[i]);
  }
  std::string accounting_cluster = acct::NameOf(cluster.settings.cluster_name);
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
    if (const acct::Association* record =
            snapshot.accounting ? snapshot.accounting->FindAssociation(
                                      accounting_cluster, tree[i].account, tree[i].user)
                                : nullptr)
      share.grp_tres_mins = FormatTres(record->limits.grp_tres_mins);
    share.tres_run_mins = TresMinutes(run[i], gpus);
    share.grp_tres_raw = TresMinutes(used[i], gpus);
    if (SeesShare(share, caller, snapshot.cluster->settings)) shares.push_back(std::move(share));
  }
  return shares;
}

}  // namespace drover::ctld::views
