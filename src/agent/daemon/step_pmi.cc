// A step session's PMI (srun --mpi=pmi2 or --mpi=pmix). See step_session.h.
//
// pmi2: each task here gets one end of a socket pair (PMI_FD) and the session's own thread
// serves the other ends with the wire protocol (host/pmi_wire.h) between its reads of the tasks'
// output. pmix: the agent's OpenPMIx server (pmix_host.h) serves the tasks; the session
// registers the step's namespace and its tasks, and hands the server's fences to srun.
//
// A fence is a collective of the step's nodes: this node's part goes to srun on the step's
// stream (StepOutput.collective), srun sends every node's parts back (StepInput.collective) once
// it has them all, and the input thread hands them to whoever waits (the wire server, through
// this thread, or the PMIx server, directly). Collectives are numbered in the order a node
// starts them, which is the same on every node because every task takes part in each.
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "agent/daemon/pmix_host.h"
#include "agent/daemon/step_session.h"
#include "common/hostlist.h"
#include "common/log.h"
#include "common/text.h"

namespace drover::agent {
namespace {

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

void Wake(int fd) {
  uint64_t one = 1;
  if (fd >= 0) (void)!::write(fd, &one, sizeof one);
}

}  // namespace

Status StepSession::StartPmi() {
  std::string mpi = ToLower(launch_.mpi());
  if (mpi == "pmi2")
    mpi_ = "pmi2";
  else if (mpi.starts_with("pmix"))
    mpi_ = "pmix";
  else
    return OkStatus();  // none (srun refused any type Drover does not serve)
  const uint32_t size = launch_.ntasks();
  std::vector<uint32_t> node_of_rank(launch_.task_nodes().begin(), launch_.task_nodes().end());
  if (node_of_rank.size() != size)
    return MakeError(
        fmt::format("--mpi={}: srun sent no node for each of the step's {} tasks", mpi_, size));
  for (uint32_t node : node_of_rank)
    if (node >= launch_.nnodes())
      return MakeError(
          fmt::format("--mpi={}: a task on node {} of {}", mpi_, node, launch_.nnodes()));
  process_mapping_ = PmiProcessMapping(node_of_rank);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return MakeError(fmt::format("eventfd: {}", std::strerror(errno)));
  std::string step_name = fmt::format("{}.{}", job_id_, launch_.step_id());
  if (mpi_ == "pmi2") {
    PmiStep step;
    step.size = size;
    step.universe_size = size;
    step.kvsname = step_name;
    step.process_mapping = process_mapping_;
    std::vector<uint32_t> ranks(launch_.tasks().begin(), launch_.tasks().end());
    pmi_ = std::make_unique<PmiWireServer>(step, ranks);
    for (size_t i = 0; i < ranks.size(); ++i) {
      int pair[2];
      if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
        return MakeError(fmt::format("PMI socket: {}", std::strerror(errno)));
      ::fcntl(pair[0], F_SETFL, ::fcntl(pair[0], F_GETFL) | O_NONBLOCK);
      pmi_fds_.push_back(pair[0]);
      pmi_child_fds_.push_back(pair[1]);
      pmi_out_.emplace_back();
    }
    return OkStatus();
  }
  auto nodes = ExpandHostlist(launch_.node_list());
  if (!nodes) return MakeError(fmt::format("--mpi=pmix: {}", nodes.error()));
  if (nodes->size() != launch_.nnodes())
    return MakeError(fmt::format("--mpi=pmix: the step's node list {} is not its {} nodes",
                                 launch_.node_list(), launch_.nnodes()));
  PmixNamespace space;
  space.name = "drover." + step_name;
  space.job_id = step_name;
  space.node_names = *nodes;
  space.node_of_rank = node_of_rank;
  space.node_index = launch_.node_index();
  space.uid = spec_.uid;
  space.gid = spec_.gid;
  // The library's thread may call these as the step ends here: they reach the session only
  // while the link holds it (StopPmi lets go before the session does).
  pmix_link_ = std::make_shared<PmixLink>();
  pmix_link_->session = this;
  space.fence = [link = pmix_link_](std::string part,
                                    std::function<void(bool, std::vector<std::string>)> done) {
    std::lock_guard<std::mutex> lock(link->mutex);
    if (link->session)
      link->session->Contribute(std::move(part), std::move(done));
    else
      done(false, {});
  };
  space.abort = [link = pmix_link_](int status, std::string message) {
    std::lock_guard<std::mutex> lock(link->mutex);
    if (link->session)
      link->session->RequestAbort(fmt::format("PMIx_Abort with status {}: {}", status, message));
  };
  std::filesystem::path dir = agent_.options_.spool / "pmix";
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  ::chmod(dir.c_str(), 0755);  // the tasks, as their users, reach the server's socket in it
  if (Status registered = PmixRegister(space, dir.string()); !registered) return registered;
  pmix_space_ = space.name;
  return OkStatus();
}

// The task's variables and its end of the socket.
Status StepSession::SetupPmiTask(uint32_t rank, uint32_t local, ProcessSpec& spec) {
  if (mpi_ == "pmi2") {
    int fd = pmi_child_fds_.at(local);
    spec.kept_descriptors.push_back(fd);
    SetVariable(spec.environment, "PMI_FD", std::to_string(fd));
    SetVariable(spec.environment, "PMI_JOBID", fmt::format("{}.{}", job_id_, launch_.step_id()));
    SetVariable(spec.environment, "PMI_RANK", std::to_string(rank));
    SetVariable(spec.environment, "PMI_SIZE", std::to_string(launch_.ntasks()));
  } else if (mpi_ == "pmix") {
    auto variables = PmixClientEnvironment(pmix_space_, rank);
    if (!variables) return MakeError(variables.error());
    for (const std::string& entry : *variables) {
      size_t equals = entry.find('=');
      if (equals != std::string::npos)
        SetVariable(spec.environment, entry.substr(0, equals), entry.substr(equals + 1));
    }
    // Slurm's mpi/pmix sets these beside the library's own.
    SetVariable(spec.environment, "SLURM_PMIX_MAPPING_SERV", process_mapping_);
    SetVariable(spec.environment, "PMIX_HOSTNAME", agent_.node_name_);
  }
  return OkStatus();
}

// Our copy of the task's end is closed once the task has its own.
void StepSession::PmiTaskSpawned(uint32_t local) {
  if (mpi_ == "pmi2" && local < pmi_child_fds_.size()) CloseFd(pmi_child_fds_[local]);
}

void StepSession::AddPmiPolls(std::vector<pollfd>& fds, std::vector<int>& owners) const {
  if (wake_fd_ >= 0) {
    fds.push_back({wake_fd_, POLLIN, 0});
    owners.push_back(-1);
  }
  for (size_t i = 0; i < pmi_fds_.size(); ++i)
    if (pmi_fds_[i] >= 0) {
      fds.push_back({pmi_fds_[i], POLLIN, 0});
      owners.push_back(static_cast<int>(i));
    }
}

void StepSession::ServePmi(std::span<const pollfd> fds, const std::vector<int>& owners) {
  if (mpi_.empty()) return;
  for (size_t k = 0; k < fds.size(); ++k) {
    if (fds[k].revents == 0) continue;
    if (owners[k] < 0) {
      uint64_t count;
      (void)!::read(wake_fd_, &count, sizeof count);
      continue;
    }
    // One read a task a turn: a task that writes without pause does not starve the others.
    size_t local = static_cast<size_t>(owners[k]);
    char buffer[16 * 1024];
    ssize_t got = ::read(pmi_fds_[local], buffer, sizeof buffer);
    if (got > 0) {
      pmi_->Receive(local, std::string_view(buffer, static_cast<size_t>(got)));
    } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
      pmi_->Closed(local);  // the task closed it (or ended): its fences go on without it
      CloseFd(pmi_fds_[local]);
    }
  }
  // Fences whose parts have come: every waiting task released.
  std::vector<std::pair<bool, std::vector<std::string>>> results;
  std::optional<std::string> abort;
  {
    MutexLock lock(collective_mutex_);
    results.swap(fence_results_);
    abort.swap(abort_request_);
  }
  if (pmi_) {
    for (auto& [ok, parts] : results)
      if (!pmi_->FenceDone(ok ? parts : std::vector<std::string>{"\xff"}))
        log::Warning("job {} step {}: a PMI fence failed", job_id_, launch_.step_id());
    if (std::optional<std::string> part = pmi_->TakeFencePart())
      Contribute(std::move(*part), [this](bool ok, std::vector<std::string> parts) {
        {
          MutexLock lock(collective_mutex_);
          fence_results_.emplace_back(ok, std::move(parts));
        }
        Wake(wake_fd_);
      });
    if (auto aborted = pmi_->abort(); aborted && !abort)
      abort = fmt::format("PMI abort with exit code {}: {}", aborted->first, aborted->second);
    for (size_t local = 0; local < pmi_fds_.size(); ++local) {
      if (pmi_fds_[local] < 0) continue;
      // Replies go out as the socket takes them; what it does not take waits for the next turn,
      // up to a bound past which the task (which does not read them) is cut off.
      std::string& out = pmi_out_[local];
      out += pmi_->TakeReplies(local);
      while (!out.empty()) {
        ssize_t sent = ::send(pmi_fds_[local], out.data(), out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent > 0) {
          out.erase(0, static_cast<size_t>(sent));
          continue;
        }
        if (sent < 0 && errno == EINTR) continue;
        if (sent < 0 && errno != EAGAIN) out.clear();  // the task is gone
        break;
      }
      if (out.size() > PmiWireServer::kBufferMost) {
        log::Warning(
            "job {} step {}: task {} does not read its PMI replies: its connection is "
            "closed",
            job_id_, launch_.step_id(), launch_.tasks(static_cast<int>(local)));
        pmi_->Closed(local);
        out.clear();
        CloseFd(pmi_fds_[local]);
        continue;
      }
      if (pmi_->Broken(local)) {
        log::Warning("job {} step {}: task {}'s PMI connection closed: {}", job_id_,
                     launch_.step_id(), launch_.tasks(static_cast<int>(local)),
                     pmi_->BrokenWhy(local));
        CloseFd(pmi_fds_[local]);
      }
    }
  }
  if (abort) AbortStep(*abort);
  SendCollectives();
}

void StepSession::Contribute(std::string part,
                             std::function<void(bool, std::vector<std::string>)> done) {
  {
    MutexLock lock(collective_mutex_);
    uint32_t sequence = next_collective_++;
    waiting_[sequence] = std::move(done);
    v1::StepOutput message;
    message.mutable_collective()->set_sequence(sequence);
    message.mutable_collective()->add_parts(std::move(part));
    outgoing_.push_back(std::move(message));
  }
  Wake(wake_fd_);
}

// The input thread: every node's parts of a collective.
void StepSession::OnCollective(const v1::StepCollective& collective) {
  std::function<void(bool, std::vector<std::string>)> done;
  {
    MutexLock lock(collective_mutex_);
    auto found = waiting_.find(collective.sequence());
    if (found == waiting_.end()) return;  // not one of ours: srun is confused, or hostile
    done = std::move(found->second);
    waiting_.erase(found);
  }
  done(true, std::vector<std::string>(collective.parts().begin(), collective.parts().end()));
}

// This thread alone writes to srun.
void StepSession::SendCollectives() {
  std::vector<v1::StepOutput> outgoing;
  {
    MutexLock lock(collective_mutex_);
    outgoing.swap(outgoing_);
  }
  for (const v1::StepOutput& message : outgoing) write_(message);
}

void StepSession::RequestAbort(std::string why) {
  {
    MutexLock lock(collective_mutex_);
    abort_request_ = std::move(why);
  }
  Wake(wake_fd_);
}

// A task aborted: srun ends the step everywhere; the tasks here are killed at once.
void StepSession::AbortStep(const std::string& why) {
  if (abort_sent_) return;
  abort_sent_ = true;
  log::Info("job {} step {}: {}", job_id_, launch_.step_id(), why);
  v1::StepOutput message;
  message.set_abort(true);
  message.set_error(why);
  write_(message);
  SignalTasks(SIGKILL);
}

// The step is over here: fences still waiting fail, and the namespace goes.
void StepSession::StopPmi() {
  if (pmix_link_) {
    std::lock_guard<std::mutex> lock(pmix_link_->mutex);
    pmix_link_->session = nullptr;
  }
  std::map<uint32_t, std::function<void(bool, std::vector<std::string>)>> waiting;
  {
    MutexLock lock(collective_mutex_);
    waiting.swap(waiting_);
  }
  for (auto& [sequence, done] : waiting) done(false, {});
  if (!pmix_space_.empty()) PmixDeregister(pmix_space_);
  pmix_space_.clear();
  for (int& fd : pmi_fds_) CloseFd(fd);
  for (int& fd : pmi_child_fds_) CloseFd(fd);
  CloseFd(wake_fd_);
}

}  // namespace drover::agent
