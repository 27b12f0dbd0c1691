// What the engine's test fixtures share: one client event applied as a batch of its own, and
// its reply; and EngineTest, a manual clock and a two-node cluster whose agents the test plays.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "ctld/engine/engine.h"

namespace drover::ctld {

// Applies `event` under the next token; `last` keeps the batch's output. The reply to it, or
// a refusal that says none came.
inline Reply AskEngine(Engine& engine, uint64_t& token, EngineOutput& last, Event event) {
  std::visit(
      [&](auto& e) {
        if constexpr (requires { e.token; }) e.token = ++token;
      },
      event);
  std::vector<Event> batch;
  batch.push_back(std::move(event));
  last = engine.Apply(std::move(batch));
  for (const Effect& effect : last.effects)
    if (auto* reply = std::get_if<Reply>(&effect); reply && reply->token == token) return *reply;
  return Reply{0, false, "no reply", {}, {}};
}

// Engine tests: a manual clock, the demo-like cluster, and agents played by the test (they
// register, heartbeat and report job ends; launches and signals are read from the effects).
inline constexpr const char* kEngineTestCluster =
    "ClusterName=t\nGresTypes=gpu\nDefMemPerCPU=100\nKillWait=30\nSlurmdTimeout=300\n"
    "MinJobAge=300\nReturnToService=1\nMaxArraySize=100\nMaxJobCount=50\nMaxStepCount=5\n"
    "NodeName=n[1-2] CPUs=8 RealMemory=8000 Gres=gpu:2\n"
    "PartitionName=p Nodes=ALL Default=YES MaxTime=2:00:00\n";

// Every cycle checks the kept pool of running jobs against one built afresh.
inline EngineOptions CheckedEngineOptions() {
  EngineOptions options;
  options.check_kept_pool = true;
  return options;
}

class EngineTest : public ::testing::Test {
 protected:
  explicit EngineTest(const std::string& conf = kEngineTestCluster)
      : load_(LoadClusterConfigText(conf)), engine_(load_.config, clock_, CheckedEngineOptions()) {
    EXPECT_TRUE(load_.ok());
    Apply(NodeRegistered{"n1", {}}, NodeRegistered{"n2", {}});
  }

  template <typename... Events>
  EngineOutput Apply(Events... events) {
    std::vector<Event> batch{Event(std::move(events))...};
    last_ = engine_.Apply(std::move(batch));
    return last_;
  }

  // Time passes with both agents alive.
  EngineOutput Pass(int64_t seconds) {
    clock_.Advance(seconds);
    return Apply(Heartbeat{"n1", true, ""}, Heartbeat{"n2", true, ""}, Tick{});
  }

  uint64_t Submit(JobSpec spec, const std::string& array = "") {
    spec.user = spec.user.empty() ? "alice" : spec.user;
    spec.account = "research";
    if (spec.time_limit_seconds == 0) spec.time_limit_seconds = 3600;
    EngineOutput out = Apply(SubmitJob{++token_, Caller{1000, 1000}, spec, array, "#!/bin/sh\n"});
    const Reply* reply = FindReply(out, token_);
    EXPECT_TRUE(reply && reply->ok) << (reply ? reply->error : "no reply");
    return reply && reply->ok ? reply->job_ids.front() : 0;
  }

  // srun's CreateStep for job `id` as its owner; the engine's reply (empty when none came).
  Reply CreateStepOf(uint64_t id, CreateStep event) {
    event.token = ++token_;
    event.caller = Caller{1000, 1000};
    event.job_id = id;
    Apply(event);
    const Reply* reply = FindReply(last_, token_);
    return reply ? *reply : Reply{};
  }

  static const Reply* FindReply(const EngineOutput& out, uint64_t token) {
    for (const Effect& effect : out.effects)
      if (auto* reply = std::get_if<Reply>(&effect); reply && reply->token == token) return reply;
    return nullptr;
  }
  template <typename T>
  std::vector<T> Effects() const {
    std::vector<T> found;
    for (const Effect& effect : last_.effects)
      if (auto* e = std::get_if<T>(&effect)) found.push_back(*e);
    return found;
  }
  JobState State(uint64_t id) const { return engine_.FindJob(id)->state; }
  std::string Reason(uint64_t id) const {
    return std::string(sched::PendingReasonName(engine_.FindJob(id)->reason));
  }

  ManualClock clock_;
  ConfigLoad load_;
  Engine engine_;
  EngineOutput last_;
  uint64_t token_ = 0;
};

inline JobSpec Gpus(uint32_t gpus) {
  JobSpec spec;
  spec.gpus_per_node = gpus;
  return spec;
}

}  // namespace drover::ctld
