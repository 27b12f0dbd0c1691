// sattach: a running step's output told to those attached to it as well as to srun, and their
// input given to its task 0. See Agent::AttachStep.
#include <fmt/format.h>

#include "agent/daemon/step_session.h"
#include "common/fd_io.h"

namespace drover::agent {

void StepSession::OpenToAttach() {
  auto listeners = std::make_shared<Agent::StepListeners>();
  listeners->uid = spec_.uid;
  v1::StepAttached& layout = listeners->layout;
  for (uint32_t rank : launch_.tasks()) layout.add_tasks(rank);
  layout.set_ntasks(launch_.ntasks());
  layout.set_nnodes(launch_.nnodes());
  layout.set_node_list(launch_.node_list());
  layout.set_node_index(launch_.node_index());
  layout.set_pty(launch_.pty());
  {
    MutexLock lock(listeners->mutex);
    listeners->to_stdin = [this](const std::string& data) { WriteStdin(data); };
  }
  listeners_ = listeners;
  agent_.OpenStep(job_id_, launch_.step_id(), listeners);
}

void StepSession::TellAttached(const v1::StepOutput& message) {
  if (!listeners_) return;
  MutexLock lock(listeners_->mutex);
  for (auto& [id, writer] : listeners_->writers) writer.first(message);
}

// The tasks have ended: the listeners' streams end too.
void StepSession::CloseToAttach() {
  if (!listeners_) return;
  agent_.CloseStep(job_id_, launch_.step_id());
  MutexLock lock(listeners_->mutex);
  listeners_->ended = true;
  listeners_->to_stdin = nullptr;
  for (auto& [id, writer] : listeners_->writers) writer.second();
}

void StepSession::WriteStdin(const std::string& data) {
  MutexLock lock(stdin_mutex_);
  if (stdin_fd_ >= 0 && task0_here_ && !WriteFully(stdin_fd_, data)) {
    ::close(stdin_fd_);
    stdin_fd_ = -1;
  }
}

void Agent::OpenStep(uint64_t job_id, uint32_t step_id, std::shared_ptr<StepListeners> listeners) {
  MutexLock lock(steps_mutex_);
  open_steps_[{job_id, step_id}] = std::move(listeners);
}

void Agent::CloseStep(uint64_t job_id, uint32_t step_id) {
  MutexLock lock(steps_mutex_);
  open_steps_.erase({job_id, step_id});
}

Status Agent::AttachStep(uint64_t job_id, uint32_t step_id,
                         const std::function<bool(uint32_t)>& may_act, const StepWrite& write,
                         const std::function<bool(v1::StepAttachInput*)>& read,
                         const std::function<void()>& cancel) {
  std::shared_ptr<StepListeners> listeners;
  {
    MutexLock lock(steps_mutex_);
    auto found = open_steps_.find({job_id, step_id});
    if (found != open_steps_.end()) listeners = found->second;
  }
  if (!listeners)
    return MakeError(fmt::format("Job step {}.{} not found: it runs no task on {}", job_id, step_id,
                                 node_name_));
  if (!may_act(listeners->uid))
    return MakeError(
        fmt::format("Access/permission denied: step {}.{} is not yours", job_id, step_id));
  uint64_t id = 0;
  {
    MutexLock lock(listeners->mutex);
    if (listeners->ended) return OkStatus();
    v1::StepOutput first;
    *first.mutable_attached() = listeners->layout;
    write(first);
    id = listeners->next++;
    listeners->writers[id] = {write, cancel};
  }
  v1::StepAttachInput input;
  while (read(&input)) {
    if (input.stdin_data().empty()) continue;
    MutexLock lock(listeners->mutex);
    if (listeners->to_stdin) listeners->to_stdin(input.stdin_data());
  }
  MutexLock lock(listeners->mutex);
  listeners->writers.erase(id);
  return OkStatus();
}

}  // namespace drover::agent
