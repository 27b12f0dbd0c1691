// One srun step's streams: a bidirectional stream to each node's agent that starts its tasks and
// carries their output back, one reader thread per node, and what the tasks' ends add up to.
// Output reaches srun's stdout/stderr through one TaskOutput; it never decides when the step is
// over.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "cli/client.h"
#include "common/mutex.h"
#include "common/task_usage.h"
#include "proto/drover.grpc.pb.h"

namespace drover::cli {

// The tasks' output on the command's stdout and stderr (srun, sattach): as it comes, or with
// -l each line prefixed with its task's rank, a line cut between chunks held until its end.
// The command's own lines (Say) never land inside a task's line.
class TaskOutput {
 public:
  explicit TaskOutput(bool label) : label_(label) {}
  void Write(uint32_t task, bool is_stderr, const std::string& data) EXCLUDES(mutex_);
  void Say(std::string_view text) EXCLUDES(mutex_);
  // Writes any labelled line left without its newline.
  void FlushPartialLines() EXCLUDES(mutex_);

 private:
  const bool label_;
  Mutex mutex_;
  std::map<std::pair<uint32_t, bool>, std::string> partial_ GUARDED_BY(mutex_);
};

// One node's stream of the step. Writes come from the main thread, the stdin thread and the
// readers (a signal to all), so they are serialized.
struct NodeStream {
  v1::StepNode node;
  uint32_t index = 0;  // the node's index in the step
  std::unique_ptr<v1::Agent::Stub> stub;
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<v1::StepInput, v1::StepOutput>> stream;
  Mutex write_mutex;
  bool closed GUARDED_BY(write_mutex) = false;  // WritesDone sent: nothing more may be written
  bool Send(const v1::StepInput& input) EXCLUDES(write_mutex);
  void Close() EXCLUDES(write_mutex);
};

// How the step's tasks ended, once every reader is done.
struct StepOutcome {
  int worst_exit = 0;     // the highest exit code, 128 + signal for a signalled task
  int first_signal = 0;   // the first signal a task died of
  bool bad_exit = false;  // --kill-on-bad-exit stopped the step
  TaskUsage usage{};      // each task's measurement, merged (sacct's step statistics)
};

class StepStreams {
 public:
  // `label`: -l, each line prefixed with its task's rank; `kill_on_bad_exit`: -K.
  StepStreams(bool label, bool kill_on_bad_exit, std::string step_name)
      : output_(label), kill_on_bad_exit_(kill_on_bad_exit), step_name_(std::move(step_name)) {}
  ~StepStreams() { Join(); }

  // Opens a stream to every node of `step` and sends each its part of `launch`.
  // False, having said why, when a node's channel cannot be opened or its agent cannot be
  // reached within `timeout_seconds` (srun --msg-timeout).
  bool Start(const v1::CreateStepReply& step, const v1::StepLaunch& launch,
             const Connection& connection, int timeout_seconds);
  // srun --compress: the launch (and stdin) travel deflate-compressed.
  void set_compress(bool compress) { compress_ = compress; }
  // One reader thread per node from here on.
  void StartReaders();
  void SignalAll(int signal);
  // The node that runs task 0 (nullptr when there is none): srun's stdin goes there.
  NodeStream* Task0Node() const;
  uint32_t TasksEnded() const { return tasks_ended_.load(); }
  // Lines of srun's own on stderr, never inside a task's line.
  void Say(std::string_view text) { output_.Say(text); }
  // Waits for the readers.
  void Join();
  // Writes any --label line left without its newline.
  void FlushPartialLines() { output_.FlushPartialLines(); }
  StepOutcome Outcome() const;

 private:
  void Read(NodeStream& node);
  void TaskEnded(const NodeStream& node, const v1::StepOutput::TaskEnd& end);
  void RaiseWorstExit(int code);
  // A node's part of a PMI collective; once every node's is in, all go to every node.
  void Collect(const NodeStream& node, const v1::StepCollective& part) EXCLUDES(collective_mutex_);

  TaskOutput output_;
  const bool kill_on_bad_exit_;
  bool compress_ = false;
  const std::string step_name_;
  std::vector<std::unique_ptr<NodeStream>> nodes_;
  uint32_t task0_node_ = 0;
  std::vector<std::thread> readers_;
  std::atomic<int> worst_exit_{0};
  std::atomic<int> first_signal_{0};
  std::atomic<bool> bad_exit_seen_{false};
  std::atomic<int> bad_exit_code_{0}, bad_exit_signal_{0};  // the task that ended the step
  std::atomic<uint32_t> tasks_ended_{0};
  Mutex collective_mutex_;
  std::map<uint32_t, std::vector<std::string>> collective_parts_ GUARDED_BY(collective_mutex_);
  std::map<uint32_t, uint32_t> collective_count_ GUARDED_BY(collective_mutex_);
  mutable Mutex usage_mutex_;
  TaskUsage usage_ GUARDED_BY(usage_mutex_);
};

}  // namespace drover::cli
