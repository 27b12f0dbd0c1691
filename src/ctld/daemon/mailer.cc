// MailProg runs; see mailer.h.
#include "ctld/daemon/mailer.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "common/result.h"
#include "ctld/daemon/callers.h"

namespace drover::ctld {
namespace {

using Clock = std::chrono::steady_clock;

// Slurm's job_common_env_vars also names the job's group; the engine has only its ID.
void AddGroupName(std::vector<std::string>& environment) {
  for (const std::string& entry : environment) {
    if (!entry.starts_with("SLURM_JOB_GID=")) continue;
    gid_t gid = static_cast<gid_t>(std::strtoul(entry.c_str() + 14, nullptr, 10));
    environment.push_back("SLURM_JOB_GROUP=" + GroupName(gid));
    return;
  }
}

// Reads what the program writes until it closes its end or `deadline` passes.
std::string ReadUntil(int fd, Clock::time_point deadline, bool& timed_out) {
  std::string output;
  char buffer[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      return output;
    }
    pollfd descriptor{fd, POLLIN, 0};
    int ready = poll(&descriptor, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    ssize_t got = read(fd, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return output;
    if (output.size() < 4096) output.append(buffer, static_cast<size_t>(got));
  }
}

// Who MailProg runs as: SlurmUser, as under slurmctld (which itself runs as SlurmUser), when this
// daemon is root and SlurmUser is another account; nobody to switch to otherwise.
struct RunAs {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};
Result<std::optional<RunAs>> MailAccount(const std::string& slurm_user) {
  if (geteuid() != 0) return std::optional<RunAs>();
  std::optional<uint32_t> uid = UidOfName(slurm_user);
  if (!uid) return MakeError(fmt::format("SlurmUser {} is not a user of this host", slurm_user));
  if (*uid == 0) return std::optional<RunAs>();
  RunAs as{*uid, *uid, {}};  // a number the user database does not know: that gid alone
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwuid_r(*uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found)
    as.gid = found->pw_gid;
  if (found) {
    std::vector<uint32_t> groups = GroupList(found->pw_name, as.gid);
    as.groups.assign(groups.begin(), groups.end());
  }
  if (as.groups.empty()) as.groups = {as.gid};
  return std::optional<RunAs>(std::move(as));
}

// The child: stdin from /dev/null, stdout and stderr into `out`, a process group of its own (so
// a timeout kills all of it), SlurmUser's account, then MailProg. System calls only: the parent
// is multi-threaded.
[[noreturn]] void RunMailProg(const char* path, char* const argv[], char* const envp[], int out,
                              const std::optional<RunAs>& as) {
  setpgid(0, 0);
  int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (in < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0) _exit(126);
  if (as && (setgroups(as->groups.size(), as->groups.data()) != 0 || setgid(as->gid) != 0 ||
             setuid(as->uid) != 0)) {
    static const char kSwitch[] = "cannot become SlurmUser\n";
    (void)!write(2, kSwitch, sizeof kSwitch - 1);
    _exit(126);
  }
  execve(path, argv, envp);
  static const char kExec[] = "cannot execute MailProg\n";
  (void)!write(2, kExec, sizeof kExec - 1);
  _exit(127);
}

}  // namespace

Mailer::Mailer(std::shared_ptr<const ClusterConfig> cluster, std::chrono::milliseconds timeout)
    : timeout_(timeout), cluster_(std::move(cluster)) {
  worker_ = std::thread([this] { Run(); });
}

Mailer::~Mailer() {
  {
    MutexLock lock(mutex_);
    stop_ = true;
  }
  wake_.NotifyAll();
  worker_.join();
}

void Mailer::Send(MailJob mail) {
  {
    MutexLock lock(mutex_);
    if (queue_.size() >= kMaxQueued) {
      std::fprintf(stderr,
                   "droverctld: MailProg is behind (%zu mails queued): mail for job %llu "
                   "to %s dropped\n",
                   queue_.size(), static_cast<unsigned long long>(mail.job_id), mail.user.c_str());
      return;
    }
    queue_.push_back(std::move(mail));
  }
  wake_.NotifyOne();
}

void Mailer::Reconfigured(std::shared_ptr<const ClusterConfig> cluster) {
  MutexLock lock(mutex_);
  cluster_ = std::move(cluster);
}

void Mailer::Run() {
  for (;;) {
    MailJob mail;
    std::string program, slurm_user;
    {
      MutexLock lock(mutex_);
      wake_.Wait(mutex_, [this]() REQUIRES(mutex_) { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      mail = std::move(queue_.front());
      queue_.pop_front();
      program = cluster_->settings.mail_prog;
      slurm_user = cluster_->settings.slurm_user;
    }
    if (std::string error = Deliver(program, slurm_user, mail); !error.empty())
      std::fprintf(stderr, "droverctld: mail for job %llu to %s not sent: %s\n",
                   static_cast<unsigned long long>(mail.job_id), mail.user.c_str(), error.c_str());
  }
}

std::string Mailer::Deliver(const std::string& program, const std::string& slurm_user,
                            const MailJob& mail) const {
  if (program.empty()) return "MailProg is empty";
  if (access(program.c_str(), X_OK) != 0)
    return fmt::format("MailProg {}: {}", program, std::strerror(errno));
  Result<std::optional<RunAs>> as = MailAccount(slurm_user);
  if (!as) return as.error();
  std::vector<std::string> environment = mail.environment;
  environment.push_back("PATH=/usr/bin:/bin:/usr/sbin:/sbin");
  AddGroupName(environment);
  std::vector<char*> envp;
  for (std::string& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::string dash_s = "-s", subject = mail.subject, user = mail.user, path = program;
  char* argv[] = {path.data(), dash_s.data(), subject.data(), user.data(), nullptr};
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return fmt::format("pipe: {}", std::strerror(errno));
  pid_t pid = fork();
  if (pid == 0) RunMailProg(path.c_str(), argv, envp.data(), out[1], *as);
  int fork_error = errno;
  close(out[1]);
  if (pid < 0) {
    close(out[0]);
    return fmt::format("MailProg {}: fork: {}", program, std::strerror(fork_error));
  }
  const Clock::time_point deadline = Clock::now() + timeout_;
  bool timed_out = false;
  std::string output = ReadUntil(out[0], deadline, timed_out);
  close(out[0]);
  int status = 0;
  // It may close its output and go on running: it still has only until the deadline.
  while (!timed_out && waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() >= deadline)
      timed_out = true;
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (timed_out) {
    kill(-pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (timed_out) return fmt::format("MailProg {} killed after {} ms", program, timeout_.count());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return fmt::format("MailProg returned error, its output was '{}'", output);
  return "";
}

}  // namespace drover::ctld
