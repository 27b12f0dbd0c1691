// The engine thread owns the Engine; the commit thread owns the Store. Requests from gRPC
// handlers queue here; each batch of queued events is applied by the engine thread, which then
// hands the batch's records to the commit thread and goes on with the next batch while they
// are written in one transaction (group commit). Only after the commit are the batch's replies
// released, its effects carried out and its snapshot published: no reader sees, and no agent is
// told, what the store does not hold yet. Readers take the last published snapshot and never
// wait for a batch.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <thread>
#include <unordered_map>

#include "common/mutex.h"
#include "ctld/daemon/loop_stats.h"
#include "ctld/engine/engine.h"
#include "ctld/store/store.h"

namespace drover::ctld {

// Carries out launches, signals and terminations (on the agents); may be slow, never blocks
// the engine thread.
class EffectSink {
 public:
  virtual ~EffectSink() = default;
  // `script` and `environment` (NAME=value) as stored at submission.
  virtual void Launch(const Launch& launch, std::string script,
                      std::vector<std::string> environment) = 0;
  virtual void Signal(const SignalJob& signal) = 0;
  virtual void Terminate(const TerminateJob& terminate) = 0;
  virtual void Reboot(const RebootNode& reboot) = 0;
  // scontrol reconfigure replaced the configuration; effects after this call follow it.
  virtual void Reconfigured(std::shared_ptr<const ClusterConfig>) {}
  // --mail-type: run MailProg for it. A sink without mail (tests, the simulator's replay)
  // drops it.
  virtual void Mail(const MailJob&) {}
};

struct EngineLoopOptions {
  int64_t tick_seconds = 1;
  size_t max_batch = 4096;  // events per batch (one transaction)
  // Requests from commands waiting for the engine thread (four full batches). Past it a request
  // is refused at once (Reply::busy); the agents' events (registration, heartbeats, job ends)
  // are always queued, since losing one would lose a job's end.
  size_t max_queued = 16384;
};

// What a request refused by a full queue is told (with RESOURCE_EXHAUSTED).
inline constexpr const char* kEngineBusy =
    "the controller is busy (its queue of requests is full); retry in a moment";

class EngineLoop {
 public:
  EngineLoop(std::shared_ptr<const ClusterConfig> cluster, std::unique_ptr<Store> store,
             const Clock& clock, EffectSink& sink, EngineLoopOptions options = {});
  ~EngineLoop();

  // Loads every record from the store into the engine; call before Start.
  Status Restore();
  void Start();
  void Stop();

  // Queues an event; `done` gets the engine's reply on the commit thread once the batch is
  // committed (an event without a reply of its own gets an OK reply then). It must not block.
  // When the queue is full (options' max_queued) a command's event is not queued: `done` gets
  // a Reply with busy set and kEngineBusy as its error, at once, on the caller's thread.
  void Submit(Event event, std::function<void(const Reply&)> done);
  // The same, waiting: the future holds the reply.
  std::future<Reply> Submit(Event event);

  std::shared_ptr<const Snapshot> snapshot() const EXCLUDES(mutex_);
  uint64_t batches() const { return stats_.batches; }
  const LoopStats& stats() const { return stats_; }
  const QueueHistory& queue_history() const { return queue_history_; }
  void ResetMaxCycle() { stats_.max_cycle_micros = 0; }  // sdiag -r

 private:
  struct Request {
    Event event;
    uint64_t token;
    std::function<void(const Reply&)> done;
  };

  // One applied batch on its way to the store.
  struct Applied {
    std::vector<Request> requests;
    EngineOutput out;
    WriteBatch records;
    std::shared_ptr<const Snapshot> snapshot;
  };

  Status RestorePartitions();
  void Enqueue(Event event, std::function<void(const Reply&)> done) REQUIRES(mutex_);
  void Run();
  void RunCommits();
  void ApplyBatch(std::vector<Request>& requests, bool tick);
  WriteBatch Records(const EngineOutput& out);
  void Commit(Applied& applied);
  void CarryOut(const EngineOutput& out, std::vector<Request>& requests,
                const std::shared_ptr<const ClusterConfig>& cluster);

  std::unique_ptr<Store> store_;
  const Clock& clock_;
  EffectSink& sink_;
  EngineLoopOptions options_;
  Engine engine_;

  mutable Mutex mutex_;
  CondVar wake_;
  std::deque<Request> queue_ GUARDED_BY(mutex_);
  bool stop_ GUARDED_BY(mutex_) = false;
  std::shared_ptr<const Snapshot> snapshot_ GUARDED_BY(mutex_);
  uint64_t next_token_ GUARDED_BY(mutex_) = 1;
  LoopStats stats_;
  QueueHistory queue_history_;
  // Cycles may take at most half of this thread's time: the next may start only once as long
  // as the last one took has passed since it ended.
  std::chrono::steady_clock::time_point last_cycle_end_{};
  std::chrono::steady_clock::duration last_cycle_length_{};
  // Batches applied but not yet committed, oldest first; at most kCommitDepth wait, then the
  // engine thread waits too (the store sets the pace).
  static constexpr size_t kCommitDepth = 2;
  Mutex commit_mutex_;
  CondVar commit_wake_, commit_room_;
  std::deque<Applied> commits_ GUARDED_BY(commit_mutex_);
  bool commits_stop_ GUARDED_BY(commit_mutex_) = false;
  std::thread thread_, commit_thread_;
};

}  // namespace drover::ctld
