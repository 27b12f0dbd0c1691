// The engine thread: the one thread that owns the Engine and the Store. Requests from gRPC
// handlers queue here; each batch of queued events is applied, committed in one transaction
// (group commit), and only then are the replies released and the effects carried out. Readers
// take the snapshot published after each batch and never wait for a batch.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "ctld/daemon/loop_stats.h"
#include "ctld/engine/engine.h"
#include "ctld/store/store.h"

namespace drover::ctld {

// Carries out launches, signals and terminations (on the agents); may be slow, never blocks
// the engine thread.
class EffectSink {
 public:
  virtual ~EffectSink() = default;
  virtual void Launch(const Launch& launch, std::string script) = 0;
  virtual void Signal(const SignalJob& signal) = 0;
  virtual void Terminate(const TerminateJob& terminate) = 0;
};

struct EngineLoopOptions {
  int64_t tick_seconds = 1;
  size_t max_batch = 4096;  // events per batch (one transaction)
};

class EngineLoop {
 public:
  EngineLoop(const ClusterConfig& cluster, std::unique_ptr<Store> store, const Clock& clock,
             EffectSink& sink, EngineLoopOptions options = {});
  ~EngineLoop();

  // Loads every record from the store into the engine; call before Start.
  Status Restore();
  void Start();
  void Stop();

  // Queues an event; the future holds the engine's reply once the batch is committed (an
  // event without a reply of its own gets an OK reply then).
  std::future<Reply> Submit(Event event);

  std::shared_ptr<const Snapshot> snapshot() const;
  uint64_t batches() const { return stats_.batches; }
  const LoopStats& stats() const { return stats_; }

 private:
  struct Request {
    Event event;
    uint64_t token;
    std::promise<Reply> done;
  };

  void Run();
  void ApplyBatch(std::vector<Request>& requests, bool tick);
  WriteBatch Records(const EngineOutput& out);
  void CarryOut(const EngineOutput& out, std::vector<Request>& requests);

  const ClusterConfig& cluster_;
  std::unique_ptr<Store> store_;
  const Clock& clock_;
  EffectSink& sink_;
  EngineLoopOptions options_;
  Engine engine_;

  mutable std::mutex mutex_;  // guards queue_, stop_, snapshot_
  std::condition_variable wake_;
  std::deque<Request> queue_;
  bool stop_ = false;
  std::shared_ptr<const Snapshot> snapshot_;
  uint64_t next_token_ = 1;
  LoopStats stats_;
  // Cycles may take at most half of this thread's time: the next may start only once as long
  // as the last one took has passed since it ended.
  std::chrono::steady_clock::time_point last_cycle_end_{};
  std::chrono::steady_clock::duration last_cycle_length_{};
  std::thread thread_;
};

}  // namespace drover::ctld
