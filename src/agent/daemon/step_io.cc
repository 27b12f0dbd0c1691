// A step session while its tasks run: srun's input (stdin for task 0, signals for every task) on
// one thread, the tasks' output and ends on the session's own. See step_session.h.
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "agent/daemon/step_session.h"
#include "common/log.h"
#include "common/task_usage.h"
#include "wire/usage_codec.h"

namespace drover::agent {
namespace {

double Seconds(const timeval& time) {
  return static_cast<double>(time.tv_sec) + static_cast<double>(time.tv_usec) / 1e6;
}

constexpr size_t kChunk = 32 * 1024;
// srun closes its side once it has every task's end; one that does not is cut off after this.
constexpr auto kInputGrace = std::chrono::seconds(10);

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

void StepSession::SignalTasks(int signal) {
  MutexLock lock(signal_mutex_);
  for (pid_t group : live_groups_)
    if (group > 0) ::kill(-group, signal);
}

// The input thread. Its end (srun is done, or gone) while tasks still run kills them.
void StepSession::PumpInput() {
  v1::StepInput message;
  while (read_(&message)) {
    if (message.has_collective()) OnCollective(message.collective());
    if (message.signal() != 0) SignalTasks(message.signal());
    if (!message.stdin_data().empty()) WriteStdin(message.stdin_data(), true);
    if (message.stdin_closed() && !launch_.pty()) CloseStdin();
  }
  CloseStdin();
  if (!all_ended_) SignalTasks(SIGKILL);
  MutexLock lock(input_mutex_);
  input_done_ = true;
  input_finished_.NotifyAll();
}

void StepSession::WriteStdin(const std::string& data, bool may_wait) {
  if (!stdin_live_) return;
  MutexLock lock(stdin_mutex_);
  if (may_wait)
    stdin_changed_.Wait(stdin_mutex_, [&]() REQUIRES(stdin_mutex_) {
      return stdin_queued_ < kStdinQueueMost || stdin_closing_;
    });
  if (stdin_closing_) return;
  if (!may_wait && stdin_queued_ + data.size() > kStdinQueueMost) return;  // sattach's: dropped
  stdin_queue_.push_back(data);
  stdin_queued_ += data.size();
  stdin_changed_.NotifyAll();
}

void StepSession::CloseStdin() {
  if (!stdin_live_) return;
  MutexLock lock(stdin_mutex_);
  stdin_closing_ = true;
  stdin_changed_.NotifyAll();
}

void StepSession::StopStdin() {
  if (!stdin_live_) return;
  {
    MutexLock lock(stdin_mutex_);
    stdin_closing_ = stdin_abandoned_ = true;
    stdin_changed_.NotifyAll();
  }
  stdin_writer_.join();
}

// The stdin thread: the queue into task 0's stdin (non-blocking, so that the step's end can
// abandon a write task 0 never takes), closed once srun closes its stdin and all is written.
void StepSession::PumpStdin() {
  ::fcntl(stdin_fd_, F_SETFL, ::fcntl(stdin_fd_, F_GETFL) | O_NONBLOCK);
  while (stdin_fd_ >= 0) {
    std::string chunk;
    {
      MutexLock lock(stdin_mutex_);
      stdin_changed_.Wait(stdin_mutex_, [&]() REQUIRES(stdin_mutex_) {
        return !stdin_queue_.empty() || stdin_closing_;
      });
      if (stdin_queue_.empty() || stdin_abandoned_) break;
      chunk = std::move(stdin_queue_.front());
      stdin_queue_.pop_front();
      stdin_queued_ -= chunk.size();
      stdin_changed_.NotifyAll();
    }
    size_t done = 0;
    while (done < chunk.size()) {
      ssize_t wrote = ::write(stdin_fd_, chunk.data() + done, chunk.size() - done);
      if (wrote > 0) {
        done += static_cast<size_t>(wrote);
        continue;
      }
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote < 0 && errno == EAGAIN) {
        pollfd room{stdin_fd_, POLLOUT, 0};
        ::poll(&room, 1, 100);
        MutexLock lock(stdin_mutex_);
        if (stdin_abandoned_) break;
        continue;
      }
      CloseFd(stdin_fd_);  // task 0 closed it
      break;
    }
    MutexLock lock(stdin_mutex_);
    if (stdin_abandoned_) break;
  }
  CloseFd(stdin_fd_);
  // Nothing more is written: whoever waits for room stops waiting.
  MutexLock lock(stdin_mutex_);
  stdin_closing_ = true;
  stdin_changed_.NotifyAll();
}

// Output as it comes and each task's end once reaped, until every task has ended.
void StepSession::PumpOutput() {
  while (true) {
    PollOutput();
    v1::StepOutput ends;
    for (size_t i = 0; i < tasks_.size(); ++i) Reap(i, ends);
    bool done = std::all_of(tasks_.begin(), tasks_.end(), [](const Task& t) { return t.pid < 0; });
    if (ends.ended_size() > 0 || done) {
      write_(ends);
      TellAttached(ends);
    }
    if (done) break;
  }
  all_ended_ = true;
  // The step's own cgroup goes with its tasks (what they left behind was killed with them).
  if (!step_cgroup_.empty() && ::rmdir(step_cgroup_.c_str()) != 0 && errno != ENOENT)
    log::Warning("job {}: cannot remove {}: {}", job_id_, step_cgroup_.string(),
                 std::strerror(errno));
}

// One chunk from each descriptor that has output, waiting up to 50 ms for some.
void StepSession::PollOutput() {
  std::vector<pollfd> fds;
  std::vector<std::pair<size_t, bool>> owners;  // task index, stderr
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if (tasks_[i].out >= 0) {
      fds.push_back({tasks_[i].out, POLLIN, 0});
      owners.emplace_back(i, false);
    }
    if (tasks_[i].err >= 0) {
      fds.push_back({tasks_[i].err, POLLIN, 0});
      owners.emplace_back(i, true);
    }
  }
  // The PMI sockets and the wake-up after them.
  const size_t output_fds = fds.size();
  std::vector<int> pmi_owners;
  AddPmiPolls(fds, pmi_owners);
  // Nothing to read (every task writes to files): wait all the same, never spin.
  ::poll(fds.empty() ? nullptr : fds.data(), fds.size(), 50);
  for (size_t k = 0; k < output_fds; ++k)
    if (fds[k].revents != 0) {
      Task& task = tasks_[owners[k].first];
      Drain(task, owners[k].second ? task.err : task.out, owners[k].second, false);
    }
  if (!mpi_.empty()) ServePmi(std::span<const pollfd>(fds).subspan(output_fds), pmi_owners);
}

void StepSession::Drain(Task& task, int& fd, bool is_stderr, bool until_empty) {
  char buffer[kChunk];
  while (fd >= 0) {
    ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got > 0) {
      v1::StepOutput message;
      message.set_task(task.rank);
      message.set_stderr(is_stderr);
      message.set_data(buffer, static_cast<size_t>(got));
      write_(message);
      TellAttached(message);
      if (!until_empty) return;
      continue;
    }
    if (got < 0 && (errno == EINTR)) continue;
    if (got < 0 && errno == EAGAIN) return;
    CloseFd(fd);  // EOF (or EIO from a pty whose task ended)
  }
}

// srun --slurmd-debug=verbose (or more): the task's end in slurmstepd's words, on the task's
// stderr as Slurm copies its step daemon's log there.
void StepSession::SayTaskEnd(const Task& task) {
  std::string line = WIFSIGNALED(task.status)
                         ? fmt::format("droverstepd: task {} ({}) exited. Killed by signal {}{}.\n",
                                       task.rank, task.pid, WTERMSIG(task.status),
                                       WCOREDUMP(task.status) ? " (core dumped)" : "")
                         : fmt::format("droverstepd: task {} ({}) exited with exit code {}.\n",
                                       task.rank, task.pid, WEXITSTATUS(task.status));
  v1::StepOutput message;
  message.set_task(task.rank);
  message.set_stderr(true);
  message.set_data(line);
  write_(message);
}

// Task `index`'s end, if it has ended: what it wrote before is sent first.
void StepSession::Reap(size_t index, v1::StepOutput& ends) {
  Task& task = tasks_[index];
  if (task.ended && task.pid < 0) return;
  if (!task.ended) {
    int status = 0;
    rusage usage{};
    if (::wait4(task.pid, &status, WNOHANG, &usage) != task.pid) return;
    task.ended = true;
    task.status = status;
    task.user_cpu_seconds = Seconds(usage.ru_utime);
    task.system_cpu_seconds = Seconds(usage.ru_stime);
    task.rss_kib = static_cast<uint64_t>(std::max<long>(usage.ru_maxrss, 0));
    if (!task_epilog_.empty()) RunTaskScript(task_epilog_, task.environment);
  }
  for (int* fd : {&task.out, &task.err})
    if (*fd >= 0) {
      ::fcntl(*fd, F_SETFL, ::fcntl(*fd, F_GETFL) | O_NONBLOCK);
      Drain(task, *fd, fd == &task.err, true);
      CloseFd(*fd);
    }
  if (launch_.debug_level() >= kStepdVerbose) SayTaskEnd(task);
  v1::StepOutput::TaskEnd* end = ends.add_ended();
  end->set_task(task.rank);
  wire::ToProto(OneTask(agent_.node_name_, task.rank, task.user_cpu_seconds,
                        task.system_cpu_seconds, task.rss_kib),
                end->mutable_usage());
  if (WIFSIGNALED(task.status)) {
    end->set_signal(WTERMSIG(task.status));
  } else {
    end->set_exit_code(WEXITSTATUS(task.status));
  }
  agent_.ForgetStepGroup(job_id_, task.pid);
  MutexLock lock(signal_mutex_);
  ::kill(-task.pid, SIGKILL);  // what the task left running in its process group
  live_groups_[index] = -1;
  task.pid = -1;
}

void StepSession::FinishInput() {
  {
    MutexLock lock(input_mutex_);
    if (!input_finished_.WaitFor(input_mutex_, kInputGrace,
                                 [&]() REQUIRES(input_mutex_) { return input_done_; }))
      cancel_();
  }
  input_.join();
}

}  // namespace drover::agent
