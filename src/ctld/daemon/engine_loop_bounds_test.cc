// The engine's input queue is bounded: past max_queued a command's request is answered busy at
// once (never queued, never blocking its caller), the agents' events are still taken, and what
// was queued is applied once the engine thread runs.
#include <gtest/gtest.h>

#include <chrono>
#include <future>

#include "common/slurm_conf.h"
#include "ctld/daemon/engine_loop.h"

namespace drover::ctld {
namespace {

class NoEffects : public EffectSink {
 public:
  void Reboot(const RebootNode&) override {}
  void Launch(const drover::ctld::Launch&, std::string, std::vector<std::string>) override {}
  void Signal(const SignalJob&) override {}
  void Terminate(const TerminateJob&) override {}
};

// Built field by field: Caller gains fields as authorization grows.
CancelJobs Cancel() {
  CancelJobs cancel;
  cancel.caller.uid = 1000;
  return cancel;
}

TEST(EngineLoopBounds, FullQueueAnswersBusyAtOnce) {
  ConfigLoad load = LoadClusterConfigText(
      "ClusterName=t\nNodeName=n1 CPUs=2\nPartitionName=p Nodes=n1 Default=YES\n");
  ASSERT_TRUE(load.ok()) << load.ErrorText();
  ManualClock clock;
  NoEffects sink;
  EngineLoopOptions options;
  options.max_queued = 2;
  EngineLoop loop(std::make_shared<const ClusterConfig>(std::move(load.config)),
                  std::make_unique<MemoryStore>(), clock, sink, options);
  // Not started: nothing leaves the queue until Start.
  std::future<Reply> first = loop.Submit(Cancel());
  std::future<Reply> second = loop.Submit(Cancel());
  std::future<Reply> refused = loop.Submit(Cancel());
  ASSERT_EQ(refused.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  Reply busy = refused.get();
  EXPECT_FALSE(busy.ok);
  EXPECT_TRUE(busy.busy);
  EXPECT_EQ(busy.error, kEngineBusy);
  JobEnded end;  // of a job the engine does not know: ignored, but answered
  end.job_id = 42;
  end.node = "n1";
  std::future<Reply> ended = loop.Submit(std::move(end));
  EXPECT_NE(ended.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  loop.Start();
  EXPECT_FALSE(first.get().busy);
  EXPECT_FALSE(second.get().busy);
  EXPECT_FALSE(ended.get().busy);
  loop.Stop();
}

}  // namespace
}  // namespace drover::ctld
