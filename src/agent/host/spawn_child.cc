// Between fork and exec; see spawn_child.h. Every call here is a system call or writes into a
// fixed buffer: no heap, no locks, no stdio.
#include "agent/host/spawn_child.h"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "agent/host/job_env.h"

namespace drover::agent::spawn_child {
namespace {

constexpr std::string_view kTaskPid = "SLURM_TASK_PID";

// A message built in place: long enough for a PATH_MAX path and its words.
class Text {
 public:
  Text& operator<<(std::string_view piece) {
    size_t room = sizeof buffer_ - size_;
    size_t n = piece.size() < room ? piece.size() : room;
    std::memcpy(buffer_ + size_, piece.data(), n);
    size_ += n;
    return *this;
  }
  Text& Number(unsigned long value) {
    char digits[24];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + value % 10);
      value /= 10;
    } while (value > 0);
    while (n > 0) *this << std::string_view(&digits[--n], 1);
    return *this;
  }
  // strerror's words without its locale lookup (the child may not take its lock); the same words
  // in the C locale, which the daemons keep.
  Text& Error(int error) {
    if (const char* words = ::strerrordesc_np(error)) return *this << words;
    *this << "Unknown error ";
    if (error < 0) *this << "-";
    return Number(static_cast<unsigned long>(error < 0 ? -static_cast<long>(error) : error));
  }
  std::string_view view() const { return {buffer_, size_}; }

 private:
  char buffer_[8192];
  size_t size_ = 0;
};

void WriteAll(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t wrote = ::write(fd, text.data(), text.size());
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return;
    text.remove_prefix(static_cast<size_t>(wrote));
  }
}

// The words Slurm's slurmstepd (and droverstepd before this file) used for each failure.
void Describe(const ProcessSpec& spec, SpawnPhase phase, int error, const char* call, Text& text) {
  const ProcessUser* user = spec.user ? &*spec.user : nullptr;
  switch (phase) {
    case SpawnPhase::kSession:
    case SpawnPhase::kLimits:
    case SpawnPhase::kRedirect:
      text << call << ": ";
      break;
    case SpawnPhase::kGroups:
      text << "cannot set the groups of user " << (user ? user->name : "") << ": ";
      break;
    case SpawnPhase::kGid:
      text << "cannot switch to gid ";
      text.Number(user ? user->gid : 0) << ": ";
      break;
    case SpawnPhase::kUid:
      text << "cannot switch to uid ";
      text.Number(user ? user->uid : 0) << " (user " << (user ? user->name : "") << "): ";
      break;
    case SpawnPhase::kStdout:
      text << "could not open stdout file " << spec.stdout_source.path << ": ";
      break;
    case SpawnPhase::kStderr:
      text << "could not open stderr file " << spec.stderr_source.path << ": ";
      break;
    case SpawnPhase::kStdin:
      text << "could not open stdin file " << spec.stdin_source.path << ": ";
      break;
    case SpawnPhase::kWorkDir:
      text << "couldn't chdir to /tmp either. dying.";
      return;
    case SpawnPhase::kExec:
      text << "execve(): " << spec.program << ": ";
      break;
  }
  text.Error(error);
}

// Tells the parent (through `report`) and, with a prefix, the child's stderr — the job's error
// file once it is open, so its user sees why — then exits: execve's errno, as slurmstepd does,
// else 1.
[[noreturn]] void Fail(const Plan& plan, int report, SpawnPhase phase, int error,
                       const char* call = "") {
  Text text;
  Describe(*plan.spec, phase, error, call, text);
  ReportHeader header{static_cast<int>(phase), error};
  WriteAll(report, std::string_view(reinterpret_cast<const char*>(&header), sizeof header));
  WriteAll(report, text.view());
  if (!plan.spec->stderr_prefix.empty()) {
    Text line;
    line << plan.spec->stderr_prefix << text.view() << "\n";
    WriteAll(STDERR_FILENO, line.view());
  }
  ::_exit(phase == SpawnPhase::kExec ? error : 1);
}

void ResetSignals(const std::vector<int>& signals) {
  for (int signal : signals) ::signal(signal, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

// The call that failed, or null.
const char* MakeSession(const ProcessSpec& spec) {
  switch (spec.session) {
    case SessionKind::kInherit:
      return nullptr;
    case SessionKind::kProcessGroup:
      return ::setpgid(0, 0) == 0 ? nullptr : "setpgid";
    case SessionKind::kSession:
      return ::setsid() >= 0 ? nullptr : "setsid";
    case SessionKind::kTerminal:
      if (::setsid() < 0) return "setsid";
      return ::ioctl(spec.terminal, TIOCSCTTY, 0) == 0 ? nullptr : "ioctl(TIOCSCTTY)";
  }
  return nullptr;
}

// Reads exactly `size` bytes; false at an early end or an error.
bool ReadExactly(int fd, char* into, size_t size) {
  while (size > 0) {
    ssize_t got = ::read(fd, into, size);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    into += got;
    size -= static_cast<size_t>(got);
  }
  return true;
}

// One byte to the parent, then one from it: the parent has joined us to the job's cgroup.
// `note`: room for the text the parent sends after the go byte (its length, then its bytes; not
// read to the pipe's end, which another child forked meanwhile may hold open); `note_size` its
// length.
void Handshake(Pipes pipes, std::string* note, size_t& note_size) {
  WriteAll(pipes.ready, "r");
  ::close(pipes.ready);
  char go = 0;
  if (!ReadExactly(pipes.go, &go, 1)) ::_exit(1);  // the parent gave up; it already knows why
  uint32_t size = 0;
  if (note && ReadExactly(pipes.go, reinterpret_cast<char*>(&size), sizeof size) &&
      size <= note->size() && ReadExactly(pipes.go, note->data(), size))
    note_size = size;
  ::close(pipes.go);
}

// Makes `source` descriptor `target`; false with errno set, `opening` true when the open failed.
bool Place(const StdioSource& source, int target, bool& opening, int root) {
  opening = false;
  int fd = target;
  switch (source.kind) {
    case StdioSource::kInherit:
      return true;
    case StdioSource::kDescriptor:
      fd = source.fd;
      break;
    case StdioSource::kFile:
      opening = true;
      fd = root >= 0 && source.path.starts_with('/')
               ? ::openat(root, source.path.c_str() + 1, source.flags | O_CLOEXEC, 0644)
               : ::open(source.path.c_str(), source.flags | O_CLOEXEC, 0644);
      if (fd < 0) return false;
      opening = false;
      break;
    case StdioSource::kSameAsStdout:
      fd = STDOUT_FILENO;
      break;
  }
  // dup2 onto itself would leave close-on-exec set.
  bool placed = fd == target ? ::fcntl(fd, F_SETFD, 0) == 0 : ::dup2(fd, target) >= 0;
  int error = errno;
  if (source.kind == StdioSource::kFile && fd != target) ::close(fd);
  errno = error;
  return placed;
}

// stdout first, then stderr (both opened as the user), then stdin: a failure to open stdin is
// written to the job's error file.
void PlaceStdio(const Plan& plan, int report) {
  const ProcessSpec& spec = *plan.spec;
  struct Slot {
    const StdioSource& source;
    int target;
    SpawnPhase phase;
  } slots[] = {{spec.stdout_source, STDOUT_FILENO, SpawnPhase::kStdout},
               {spec.stderr_source, STDERR_FILENO, SpawnPhase::kStderr},
               {spec.stdin_source, STDIN_FILENO, SpawnPhase::kStdin}};
  for (const Slot& slot : slots) {
    bool opening = false;
    if (!Place(slot.source, slot.target, opening, plan.host_root))
      Fail(plan, report, opening ? slot.phase : SpawnPhase::kRedirect, errno, "dup2");
  }
}

void ChangeDirectory(const Plan& plan, int report) {
  const ProcessSpec& spec = *plan.spec;
  if (!spec.work_dir || ::chdir(spec.work_dir->c_str()) == 0) return;
  if (!spec.stderr_prefix.empty()) {
    // Slurm's words and Slurm's fallback, so scripts and users see what they know.
    Text line;
    line << spec.stderr_prefix << "couldn't chdir to `" << *spec.work_dir << "': ";
    line.Error(errno) << ": going to /tmp instead\n";
    WriteAll(STDERR_FILENO, line.view());
  }
  if (::chdir("/tmp") != 0 && !spec.work_dir_optional)
    Fail(plan, report, SpawnPhase::kWorkDir, errno);
}

// Nothing of the caller's beyond 0, 1 and 2 reaches the program.
void CloseOnExec() {
  if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
  rlimit files{};
  rlim_t last = ::getrlimit(RLIMIT_NOFILE, &files) == 0 ? files.rlim_cur : 1024;
  if (last > 65536) last = 65536;
  for (int fd = 3; fd < static_cast<int>(last); ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
}

void WritePid(char* slot) {
  Text digits;
  digits.Number(static_cast<unsigned long>(::getpid()));
  std::memcpy(slot, digits.view().data(), digits.view().size());
  slot[digits.view().size()] = '\0';
}

// The propagated limits that could not be set, kept until stderr is open.
struct LimitFailures {
  static constexpr int kMost = 16;
  const PropagatedLimit* limit[kMost] = {};
  int error[kMost] = {};
  int count = 0;
};

void ApplyPropagatedLimits(const ProcessSpec& spec, LimitFailures& failures) {
  for (const PropagatedLimit& limit : spec.propagated_limits) {
    rlimit value{};
    if (::getrlimit(limit.resource, &value) != 0 || value.rlim_cur == limit.soft) continue;
    value.rlim_cur = limit.soft;
    if (value.rlim_max < value.rlim_cur) value.rlim_max = value.rlim_cur;
    if (::setrlimit(limit.resource, &value) == 0 || !limit.user_requested) continue;
    if (failures.count == LimitFailures::kMost) continue;
    failures.limit[failures.count] = &limit;
    failures.error[failures.count++] = errno;
  }
}

void ReportLimitFailures(const ProcessSpec& spec, const LimitFailures& failures) {
  for (int i = 0; i < failures.count; ++i) {
    const PropagatedLimit& limit = *failures.limit[i];
    Text line;
    line << spec.propagate_prefix << "Can't propagate RLIMIT_" << limit.name << " of ";
    if (limit.soft == RLIM_INFINITY)
      line << "'unlimited'";
    else
      line.Number(static_cast<unsigned long>(limit.soft));
    line << " from submit host: ";
    line.Error(failures.error[i]) << "\n";
    WriteAll(STDERR_FILENO, line.view());
  }
}

}  // namespace

bool SwitchUser(const ProcessUser& user, SpawnPhase& phase) {
  phase = SpawnPhase::kGroups;
  if (::setgroups(user.groups.size(), user.groups.data()) != 0) return false;
  phase = SpawnPhase::kGid;
  if (::setgid(user.gid) != 0) return false;
  phase = SpawnPhase::kUid;
  return ::setuid(user.uid) == 0;
}

Plan MakePlan(const ProcessSpec& spec) {
  Plan plan;
  plan.spec = &spec;
  plan.environment = spec.environment;
  // Room for any pid; the child writes its digits and a terminating NUL there.
  if (spec.task_pid_variable) SetVariable(plan.environment, kTaskPid, std::string(20, ' '));
  if (spec.stderr_note) plan.note.resize(kStderrNoteMost);
  plan.argv_storage = spec.argv;
  for (std::string& arg : plan.argv_storage) plan.argv.push_back(arg.data());
  plan.argv.push_back(nullptr);
  for (std::string& entry : plan.environment) {
    plan.envp.push_back(entry.data());
    if (spec.task_pid_variable && entry.starts_with(kTaskPid) && entry[kTaskPid.size()] == '=')
      plan.task_pid_slot = entry.data() + kTaskPid.size() + 1;
  }
  plan.envp.push_back(nullptr);
  return plan;
}

void Run(Plan& plan, Pipes pipes) {
  const ProcessSpec& spec = *plan.spec;
  for (int fd : pipes.others) ::close(fd);  // a `go` the parent closes must read as its end
  ResetSignals(spec.default_signals);
  if (const char* call = MakeSession(spec))
    Fail(plan, pipes.report, SpawnPhase::kSession, errno, call);
  Handshake(pipes, spec.stderr_note ? &plan.note : nullptr, plan.note_size);
  if (spec.mount_namespace >= 0) {
    plan.host_root = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (plan.host_root < 0) Fail(plan, pipes.report, SpawnPhase::kSession, errno, "open /");
    if (::setns(spec.mount_namespace, CLONE_NEWNS) != 0)
      Fail(plan, pipes.report, SpawnPhase::kSession, errno, "setns (the job's private /tmp)");
  }
  if (spec.umask) ::umask(*spec.umask);
  for (const ResourceLimit& limit : spec.limits) {
    rlimit value{limit.soft, limit.hard};
    if (::setrlimit(limit.resource, &value) != 0)
      Fail(plan, pipes.report, SpawnPhase::kLimits, errno, "setrlimit");
  }
  if (spec.memory_policy &&
      ::syscall(SYS_set_mempolicy, spec.memory_policy->mode, &spec.memory_policy->nodes,
                sizeof(unsigned long) * 8 + 1) != 0)
    Fail(plan, pipes.report, SpawnPhase::kLimits, errno, "set_mempolicy");
  SpawnPhase phase = SpawnPhase::kGroups;
  if (spec.user && !SwitchUser(*spec.user, phase)) Fail(plan, pipes.report, phase, errno);
  LimitFailures limit_failures;
  ApplyPropagatedLimits(spec, limit_failures);
  PlaceStdio(plan, pipes.report);
  if (plan.note_size > 0)
    WriteAll(STDERR_FILENO, std::string_view(plan.note.data(), plan.note_size));
  ReportLimitFailures(spec, limit_failures);
  ChangeDirectory(plan, pipes.report);
  if (plan.task_pid_slot) WritePid(plan.task_pid_slot);
  CloseOnExec();
  for (int fd : spec.kept_descriptors)
    if (::fcntl(fd, F_SETFD, 0) != 0)
      Fail(plan, pipes.report, SpawnPhase::kRedirect, errno, "fcntl");
  if (spec.program.empty()) Fail(plan, pipes.report, SpawnPhase::kExec, ENOENT);
  // ETXTBSY: some process still has the program open for writing. The agent writes each batch
  // script (and closes it) before the job starts, but a child another of its threads forked
  // meanwhile holds a copy of that descriptor until its own exec closes it, a moment later. So
  // exec is tried again for up to a second, as other launchers (Go's os/exec) do.
  for (int tries = 0; tries < 100; ++tries) {
    ::execve(spec.program.c_str(), plan.argv.data(), plan.envp.data());
    if (errno != ETXTBSY) break;
    timespec pause{0, 10'000'000};
    ::nanosleep(&pause, nullptr);
  }
  Fail(plan, pipes.report, SpawnPhase::kExec, errno);
}

}  // namespace drover::agent::spawn_child
