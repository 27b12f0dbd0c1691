// The pass's plan ahead; see pass.h. The planner starts from what runs (released at each job's
// expected end) and the advance reservations (each occurrence taken from the nodes for jobs
// outside it); every job that waits for resources then gets its earliest start from it, the
// first ones of each partition (all, when conservative) a reservation that later jobs must not
// delay, and a job that can start only by preempting gets its victims.
#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "common/accounting.h"
#include "sched/pass.h"

namespace drover::sched {
namespace {

// Repeating reservations are planned this far ahead (a week and a day: a weekly window is
// always seen by a job that would run into it), and at most this many times.
constexpr int64_t kRepeatHorizonSeconds = 8 * 86400;
constexpr int kMaxOccurrences = 200;

bool Listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

void Pass::BuildPlanner() {
  planner_.SetFree(pool_);
  if (PoolKept(in_)) {  // each node's releases kept with the pool: no allocation read again
    for (size_t node = 0; node < cluster_.nodes.size(); ++node)
      planner_.AddReleases(static_cast<int>(node),
                           in_.running_pool->ReleasesOn(static_cast<int>(node)));
  } else {
    for (const RunningJob& job : in_.running) planner_.AddRelease(job.held(), job.end_time);
  }
  for (size_t r = 0; r < in_.reservations.size(); ++r) {
    const AdvanceReservation& reservation = in_.reservations[r];
    int64_t start = reservation.start_time, end = reservation.end_time;
    for (int k = 0; k < kMaxOccurrences && start < AddTime(in_.now, kRepeatHorizonSeconds); ++k) {
      if (end > in_.now)
        planner_.TakeWhole(reservation.nodes, std::max(start, in_.now), end,
                           static_cast<int>(r) + 1);
      if (reservation.repeat_seconds <= 0) break;
      start += reservation.repeat_seconds;
      end += reservation.repeat_seconds;
    }
    // Beyond the occurrences planned, a repeating reservation still comes back: nothing is
    // planned on its nodes after them.
    if (reservation.repeat_seconds > 0)
      planner_.TakeWhole(reservation.nodes, std::max(start, in_.now), kForever,
                         static_cast<int>(r) + 1);
  }
  if (cluster_.settings.preempt != PreemptType::kNone) {
    preemptor_ =
        std::make_unique<Preemptor>(cluster_, planner_, pool_, in_.running, in_.qos, in_.now);
    preemption_budget_ =
        std::max<int64_t>(cluster_.settings.scheduler_params.default_queue_depth, 1);
  }
}

PendingReason Pass::ReservationOf(const JobSpec& job, std::optional<InReservation>& found) const {
  if (job.reservation.empty()) return PendingReason::kNone;
  auto it = reservations_.find(job.reservation);
  if (it == reservations_.end()) return PendingReason::kReservationDeleted;
  const AdvanceReservation& reservation = in_.reservations[it->second];
  bool open = reservation.users.empty() && reservation.accounts.empty();
  if (!open && !Listed(reservation.users, job.user) && !Listed(reservation.accounts, job.account))
    return PendingReason::kReservation;
  found = InReservation{&reservation, it->second + 1};
  return PendingReason::kNone;
}

bool Pass::ReservationNode(const InReservation& reservation, int node) const {
  const AdvanceReservation& r = *reservation.reservation;
  return r.flex || std::binary_search(r.nodes.begin(), r.nodes.end(), node);
}

int Pass::ShapeFor(const JobSpec& job, int p, const ResolvedRequest& r,
                   const Constraint& constraint, const InReservation* reservation,
                   const std::optional<NodeRequest>& shares_as_gpu) {
  const NodeRequest& need = r.per_node;
  const AdvanceReservation* window = reservation ? reservation->reservation : nullptr;
  bool counted = std::any_of(constraint.terms.begin(), constraint.terms.end(),
                             [](const Constraint::Term& t) { return t.count > 0; });
  // Built for every job a pass plans: compiled format strings into one buffer (parsing them at
  // run time was a fifth of a cycle at 100,000 pending jobs).
  std::string key;
  key.reserve(192);  // one allocation: each piece written resizes the string
  auto out = std::back_inserter(key);
  fmt::format_to(out, FMT_COMPILE("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}:{}|{}"), p, need.cpus,
                 need.memory_mb, need.whole_memory, need.gpus, need.gpu_type, need.exclusive,
                 need.max_cpus_per_node, reservation ? reservation->tag : 0, job.constraint,
                 need.share, need.share_gres, need.shares, need.nvme);
  if (shares_as_gpu)
    fmt::format_to(out, FMT_COMPILE("|as gpu {}:{}"), shares_as_gpu->share_gres,
                   shares_as_gpu->shares);
  AppendNodeMinimums(key, job);
  // Jobs that name nodes plan over a shape of their own.
  if (!job.nodelist.empty() || !job.exclude.empty() || counted)
    fmt::format_to(out, FMT_COMPILE("|job {}"), job.job_id);
  if (int found = planner_.FindShape(key); found >= 0) return found;
  Shape shape;
  shape.per_node = need;
  shape.tag = reservation ? reservation->tag : 0;
  if (window && !window->flex) {
    shape.not_before = window->start_time;
    shape.not_after = window->end_time;
  }
  std::vector<int> nodes;
  std::vector<int> named;
  for (const std::string& name : job.nodelist)
    if (int node = cluster_.FindNode(name); node >= 0) named.push_back(node);
  bool only_named = !named.empty() && static_cast<int>(named.size()) >= r.nodes;
  // The planner counts a node's GPUs, not their types: nodes without enough GPUs of the type
  // asked for are left out of the shape, so a typed job is planned (and preempts) only where it
  // could run.
  auto typed_gpus = [&](int node) {
    int count = 0;
    for (const GpuDevice& gpu : cluster_.nodes[node].gpus)
      count += need.gpu_type.empty() || gpu.type == need.gpu_type;
    return count;
  };
  for (int node : only_named ? named : cluster_.partitions[p].nodes)
    if (pool_.usable(node) && Allowed(job, p, constraint, node) &&
        (!reservation || ReservationNode(*reservation, node)) &&
        (need.gpus == 0 || typed_gpus(node) >= need.gpus) &&
        HasGresFor(cluster_.nodes[node], shares_as_gpu ? *shares_as_gpu : need))
      nodes.push_back(node);
  std::sort(nodes.begin(), nodes.end());
  return planner_.AddShape(key, shape, std::move(nodes));
}

std::optional<PlannedPlace> Pass::Earliest(const JobSpec& job, int shape, const ResolvedRequest& r,
                                           int64_t from) const {
  PlacementRequest placement{r.nodes, MaxLeaves(job), static_cast<int>(job.segment)};
  auto place = planner_.EarliestFit(shape, r.nodes, r.time_limit_seconds, placement, from);
  if (placement.max_leaves > 0) {
    // --switches waits only until its deadline; from then on any placement will do.
    int64_t limit = cluster_.settings.scheduler_params.max_switch_wait_seconds;
    int64_t wait = job.switch_wait_seconds >= 0 ? std::min(job.switch_wait_seconds, limit) : limit;
    int64_t deadline = AddTime(std::max(job.submit_time, job.begin_time), wait);
    placement.max_leaves = 0;
    auto relaxed = planner_.EarliestFit(shape, r.nodes, r.time_limit_seconds, placement,
                                        std::max(from, deadline));
    if (relaxed && (!place || relaxed->start < place->start)) place = std::move(relaxed);
  }
  return place;
}

bool Pass::TryPreemption(const JobSpec& job, const Attempt& attempt, int shape,
                         SchedulerResult& result) {
  --preemption_budget_;
  const ResolvedRequest& r = attempt.request;
  PlacementRequest placement{r.nodes, MaxLeaves(job), static_cast<int>(job.segment)};
  int qos = limits_.FindQos(job.qos);
  auto plan = preemptor_->Plan(attempt.partition, qos, r.per_node, r.nodes,
                               planner_.ShapeNodes(shape), placement);
  if (!plan) return false;
  // The victims give their resources back when their grace time ends; then the preemptor must
  // hold them for its whole time limit, or it is not worth preempting anyone.
  for (size_t victim : plan->victims)
    planner_.MoveRelease(in_.running[victim].held(), in_.running[victim].end_time,
                         preemptor_->ReleaseTime(victim));
  int64_t start = plan->place.start, end = AddTime(start, r.time_limit_seconds);
  bool holds = std::all_of(plan->place.nodes.begin(), plan->place.nodes.end(), [&](int node) {
    return planner_.Fits(node, planner_.NeedOn(node, r.per_node), start, end);
  });
  if (!holds) {
    for (size_t victim : plan->victims)
      planner_.MoveRelease(in_.running[victim].held(), preemptor_->ReleaseTime(victim),
                           in_.running[victim].end_time);
    return false;
  }
  preemptor_->Preempted(plan->victims);
  planner_.Take(plan->place.nodes, r.per_node, start, end);
  for (size_t victim : plan->victims)
    result.preempted.push_back(
        {in_.running[victim].job_id, job.job_id, preemptor_->ReleaseTime(victim)});
  result.planned.push_back({job.job_id, start, attempt.partition, plan->place.nodes, true});
  return true;
}

void Pass::PlanAhead(const JobSpec& job, const Constraint& constraint,
                     const InReservation* reservation, std::span<const Attempt> blocked,
                     SchedulerResult& result) {
  const AdvanceReservation* window = reservation ? reservation->reservation : nullptr;
  int64_t from = window && !window->flex ? std::max(in_.now, window->start_time) : in_.now;
  std::optional<PlannedPlace> best;
  const Attempt* chosen = nullptr;
  // A sharing job is planned (and preempts) as a job of one whole GPU: the plan counts a node's
  // shares over all its GPUs, which a job's shares on one GPU may not find; a GPU that is whole
  // again surely holds them.
  std::vector<Attempt> planned(blocked.begin(), blocked.end());
  for (Attempt& attempt : planned) {
    NodeRequest& need = attempt.request.per_node;
    if (need.shares == 0 || need.exclusive) continue;
    attempt.shares_as_gpu = need;
    need.gpus = 1;
    need.shares = 0;
    need.share_gres.clear();
  }
  for (const Attempt& attempt : planned) {
    int shape = ShapeFor(job, attempt.partition, attempt.request, constraint, reservation,
                         attempt.shares_as_gpu);
    if (preemptor_ && preemption_budget_ > 0 && TryPreemption(job, attempt, shape, result)) return;
    if (!policy_.backfill()) continue;
    auto place = Earliest(job, shape, attempt.request, from);
    if (place && (!best || place->start < best->start)) {
      best = std::move(place);
      chosen = &attempt;
    }
  }
  if (!best) return;
  // The depth counts per partition, and apart for each advance reservation's own jobs. A plan
  // for now means the plan's counts and the exact placement disagreed (the job could not be
  // placed now): that is not held, or it would shut others out of those nodes for nothing.
  int64_t& reserved = reserved_[{chosen->partition, reservation ? reservation->tag : 0}];
  // A job of a NoReserve QOS gets an expected start but holds nothing for it.
  int qos = limits_.FindQos(job.qos);
  bool no_reserve = qos >= 0 && (in_.qos[qos].flags & acct::kNoReserve);
  bool reserve =
      !no_reserve && reserved < policy_.reservations_per_partition && best->start > in_.now;
  if (reserve) {
    planner_.Take(best->nodes, chosen->request.per_node, best->start,
                  AddTime(best->start, chosen->request.time_limit_seconds));
    ++reserved;
  }
  result.planned.push_back(
      {job.job_id, best->start, chosen->partition, std::move(best->nodes), reserve});
}

}  // namespace drover::sched
