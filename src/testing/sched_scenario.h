// Test scenarios for the scheduler, readable at a glance: a cluster in a few lines of
// slurm.conf, jobs built with a few fields each, then the decisions of one pass. Test-only.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <string>

#include "common/cluster_config.h"
#include "common/hostlist.h"
#include "sched/scheduler.h"

namespace drover::sched::testing {

class Scenario : public JobOutcomes {
 public:
  // `slurm` is appended to "ClusterName=t GresTypes=gpu SelectTypeParameters=CR_Core_Memory".
  explicit Scenario(const std::string& slurm, std::optional<std::string> gres = std::nullopt,
                    std::optional<std::string> topology = std::nullopt) {
    load_ = LoadClusterConfigText("ClusterName=t\nGresTypes=gpu\n" + slurm, gres, topology);
    std::string errors;
    for (const auto& e : load_.diagnostics.errors()) errors += e.ToString() + "\n";
    EXPECT_TRUE(load_.ok()) << errors;
  }

  const ClusterConfig& cluster() const { return load_.config; }

  // A pending job; submit time defaults to its ID so ties keep submission order.
  JobSpec& Job(uint64_t id) {
    JobSpec& job = jobs_.emplace_back();
    job.job_id = id;
    job.user = "alice";
    job.account = "research";
    job.submit_time = static_cast<int64_t>(id);
    job.time_limit_seconds = 3600;
    return job;
  }

  // A job already running on `nodes` with `gpus` GPU device indexes on each (and one core).
  RunningJob& Running(uint64_t id, const std::string& nodes, std::vector<int> gpus = {},
                      int cores = 1) {
    RunningJob& job = running_.emplace_back();
    job.job_id = id;
    job.user = "bob";
    job.account = "research";
    job.start_time = 0;
    job.end_time = 3600;
    auto names = ExpandHostlist(nodes);
    for (const std::string& name : *names) {
      NodeAllocation part;
      part.node = cluster().FindNode(name);
      for (int c = 0; c < cores; ++c) part.cores.push_back(c);
      part.gpus = gpus;
      job.allocation.nodes.push_back(part);
    }
    return job;
  }

  RunningJob& running_job(size_t i) { return running_[i]; }
  void Outcome(uint64_t id, JobOutcome::State state, int64_t start = 0, int64_t end = 0) {
    outcomes_[id] = {state, start, end};
  }
  void Down(const std::string& node) { down_.push_back(node); }
  std::vector<Association>& associations() { return associations_; }
  std::vector<Qos>& qos() { return qos_; }
  AdvanceReservation& Reservation(const std::string& name, const std::string& nodes, int64_t start,
                                  int64_t end) {
    AdvanceReservation& reservation = reservations_.emplace_back();
    reservation.name = name;
    reservation.start_time = start;
    reservation.end_time = end;
    auto names = ExpandHostlist(nodes);
    for (const std::string& node : *names) reservation.nodes.push_back(cluster().FindNode(node));
    std::sort(reservation.nodes.begin(), reservation.nodes.end());
    return reservation;
  }
  void Policy(PolicyKind kind) { policy_ = kind; }

  const SchedulerResult& Run(int64_t now = 1000) {
    SchedulerInput input;
    input.cluster = &cluster();
    input.now = now;
    input.running = running_;
    for (const JobSpec& job : jobs_) input.pending.push_back(&job);
    input.associations = associations_;
    input.qos = qos_;
    input.reservations = reservations_;
    input.policy = policy_;
    input.outcomes = this;
    if (!down_.empty()) {
      input.node_states.assign(cluster().nodes.size(), NodeState::kUp);
      for (const std::string& name : down_)
        input.node_states[cluster().FindNode(name)] = NodeState::kDown;
    }
    result_ = Schedule(input);
    return result_;
  }

  const StartDecision* Started(uint64_t id) const {
    for (const StartDecision& start : result_.started)
      if (start.job_id == id) return &start;
    return nullptr;
  }
  // "n[1-2]" for a started job, or its pending reason's name.
  std::string Outcome(uint64_t id) const {
    if (const StartDecision* start = Started(id)) return Nodes(*start);
    for (const PendingDecision& pending : result_.pending)
      if (pending.job_id == id) return std::string(PendingReasonName(pending.reason));
    return "?";
  }
  std::string Nodes(const StartDecision& start) const {
    std::vector<std::string> names;
    for (const NodeAllocation& part : start.allocation.nodes)
      names.push_back(cluster().nodes[part.node].name);
    return CompressHostlist(names);
  }
  const SchedulerResult& result() const { return result_; }
  const PlannedStart* Planned(uint64_t id) const {
    for (const PlannedStart& plan : result_.planned)
      if (plan.job_id == id) return &plan;
    return nullptr;
  }
  // "3600 n[1-2]" (with " reserved" when the plan holds the nodes), or "none".
  std::string Plan(uint64_t id) const {
    const PlannedStart* plan = Planned(id);
    if (!plan) return "none";
    std::vector<std::string> names;
    for (int node : plan->nodes) names.push_back(cluster().nodes[node].name);
    return std::to_string(plan->start_time) + " " + CompressHostlist(names) +
           (plan->reserved ? " reserved" : "");
  }
  // The victims preempted for anyone, ascending.
  std::vector<uint64_t> Victims() const {
    std::vector<uint64_t> victims;
    for (const PreemptDecision& decision : result_.preempted) victims.push_back(decision.victim);
    std::sort(victims.begin(), victims.end());
    return victims;
  }
  std::vector<int> Gpus(uint64_t id) const {
    const StartDecision* start = Started(id);
    return start ? start->allocation.nodes.front().gpus : std::vector<int>{};
  }
  std::vector<int> Cores(uint64_t id) const {
    const StartDecision* start = Started(id);
    return start ? start->allocation.nodes.front().cores : std::vector<int>{};
  }

  JobOutcome Find(uint64_t id) const override {
    auto it = outcomes_.find(id);
    return it == outcomes_.end() ? JobOutcome{} : it->second;
  }
  JobOutcome FindArrayTask(uint64_t array_job_id, uint32_t task) const override {
    return Find(array_job_id * 1000 + task);
  }

 private:
  ConfigLoad load_;
  std::deque<JobSpec> jobs_;
  std::vector<RunningJob> running_;
  std::map<uint64_t, JobOutcome> outcomes_;
  std::vector<std::string> down_;
  std::vector<Association> associations_;
  std::vector<Qos> qos_;
  std::vector<AdvanceReservation> reservations_;
  std::optional<PolicyKind> policy_;
  SchedulerResult result_;
};

}  // namespace drover::sched::testing
