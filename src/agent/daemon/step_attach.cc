// sattach: a running step's output told to those attached to it as well as to srun, and their
// input given to its task 0. See Agent::AttachStep.
#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "agent/daemon/step_session.h"

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
    listeners->to_stdin = [this](const std::string& data) { WriteStdin(data, false); };
  }
  listeners_ = listeners;
  agent_.OpenStep(job_id_, launch_.step_id(), listeners);
}

void StepSession::TellAttached(const v1::StepOutput& message) {
  if (!listeners_) return;
  MutexLock lock(listeners_->mutex);
  if (listeners_->listeners.empty()) return;
  const size_t size = message.ByteSizeLong();
  for (auto& [id, listener] : listeners_->listeners) {
    if (listener->dropped) continue;
    if (listener->bytes + size > Agent::kListenerQueueMost) {
      listener->dropped = true;  // too far behind: its thread ends its stream
      continue;
    }
    listener->queue.push_back(message);
    listener->bytes += size;
  }
  listeners_->changed.NotifyAll();
}

// The tasks have ended: the listeners' streams end once what is queued for them is written.
void StepSession::CloseToAttach() {
  if (!listeners_) return;
  agent_.CloseStep(job_id_, launch_.step_id());
  MutexLock lock(listeners_->mutex);
  listeners_->ended = true;
  listeners_->to_stdin = nullptr;
  listeners_->changed.NotifyAll();
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
  auto me = std::make_shared<StepListener>();
  {
    MutexLock lock(listeners->mutex);
    if (listeners->ended) return OkStatus();
    v1::StepOutput first;
    *first.mutable_attached() = listeners->layout;
    me->queue.push_back(std::move(first));
    id = listeners->next++;
    listeners->listeners[id] = me;
  }
  // The writer: the queue onto the stream, until the step has ended and all is written, or this
  // listener is dropped or done; then the stream ends, which ends the reads below.
  std::thread writer([&] {
    while (true) {
      v1::StepOutput message;
      {
        MutexLock lock(listeners->mutex);
        listeners->changed.Wait(listeners->mutex, [&]() REQUIRES(listeners->mutex) {
          return !me->queue.empty() || listeners->ended || me->dropped || me->done;
        });
        if (me->dropped || me->done || (me->queue.empty() && listeners->ended)) break;
        message = std::move(me->queue.front());
        me->queue.pop_front();
        me->bytes -= std::min(me->bytes, message.ByteSizeLong());
      }
      if (!write(message)) break;
    }
    cancel();
  });
  v1::StepAttachInput input;
  while (read(&input)) {
    if (input.stdin_data().empty()) continue;
    MutexLock lock(listeners->mutex);
    if (listeners->to_stdin) listeners->to_stdin(input.stdin_data());
  }
  {
    MutexLock lock(listeners->mutex);
    me->done = true;
    listeners->changed.NotifyAll();
  }
  writer.join();
  MutexLock lock(listeners->mutex);
  listeners->listeners.erase(id);
  return OkStatus();
}

}  // namespace drover::agent
