// See controller_link.h.
#include "agent/daemon/controller_link.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include "auth/tls.h"
#include "common/text.h"
#include "wire/gpu_health_codec.h"
#include "wire/usage_codec.h"

namespace drover::agent {
namespace {

using Clock = std::chrono::steady_clock;

void Log(const std::string& message) {
  std::fprintf(stderr, "droverd: %s\n", message.c_str());
}

}  // namespace

bool RunHealthProgram(const std::string& program, std::chrono::seconds timeout,
                      std::string& output) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    output = "cannot create a pipe for the health check";
    return false;
  }
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], 1);
    dup2(pipe_fds[1], 2);
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, 0);
    setsid();
    execl(program.c_str(), program.c_str(), static_cast<char*>(nullptr));
    static const char kFailed[] = "cannot run the health check program\n";
    (void)!write(2, kFailed, sizeof(kFailed) - 1);
    _exit(127);
  }
  close(pipe_fds[1]);
  output.clear();
  auto deadline = Clock::now() + timeout;
  char buffer[4096];
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    pollfd fd{pipe_fds[0], POLLIN, 0};
    if (poll(&fd, 1, static_cast<int>(left.count())) <= 0) break;
    ssize_t n = read(pipe_fds[0], buffer, sizeof(buffer));
    if (n <= 0) break;
    if (output.size() < 65536) output.append(buffer, static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  // The output may end before the program does: wait for it within the same deadline.
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() >= deadline) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      output += (output.empty() ? "" : "; ") + std::string("health check timed out");
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  output = std::string(Trim(output));
  if (output.size() > 200) output = output.substr(0, 200);
  bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!ok && output.empty())
    output = WIFEXITED(status)
                 ? "health check exited " + std::to_string(WEXITSTATUS(status))
                 : "health check killed by signal " + std::to_string(WTERMSIG(status));
  return ok;
}

ControllerLink::ControllerLink(Agent& agent, LinkOptions options)
    : agent_(agent), options_(std::move(options)) {
  stub_ = v1::Controller::NewStub(options_.channel);
  if (!options_.nvml_library.empty()) {
    auto probe = GpuHealthProbe::Open(options_.nvml_library, agent_.gpus().gpus);
    if (probe)
      gpu_probe_ = std::move(*probe);
    else
      Log("the GPU health probes cannot run: " + probe.error());
  }
}

ControllerLink::~ControllerLink() {
  Stop();
}

void ControllerLink::Start() {
  thread_ = std::thread([this] { Run(); });
}

void ControllerLink::Stop() {
  {
    MutexLock lock(mutex_);
    stop_ = true;
  }
  wake_.NotifyAll();
  if (thread_.joinable()) thread_.join();
}

void ControllerLink::Wake() {
  {
    MutexLock lock(mutex_);
    woken_ = true;
  }
  wake_.NotifyAll();
}

void ControllerLink::Reboot(std::string program, std::chrono::seconds timeout) {
  {
    MutexLock lock(mutex_);
    reboot_program_ = std::move(program);
    reboot_timeout_ = timeout;
    woken_ = true;
  }
  wake_.NotifyAll();
}

void ControllerLink::RunReboot() {
  std::string program;
  std::chrono::seconds timeout;
  {
    MutexLock lock(mutex_);
    if (!reboot_program_) return;
    program = std::move(*reboot_program_);
    reboot_program_.reset();
    timeout = reboot_timeout_;
  }
  Log("rebooting: running RebootProgram " + program);
  std::string output;
  if (!RunHealthProgram(program, timeout, output))
    Log("RebootProgram " + program + " failed: " + output);
  // Back from the reboot: register as a node that has booted (the controller waits for it).
  registered_ = false;
}

bool ControllerLink::Register() {
  v1::RegisterRequest request;
  request.set_node(agent_.node_name());
  request.set_address(options_.address);
  const HostInfo& host = agent_.host();
  request.set_cpus(static_cast<uint32_t>(host.cpus));
  request.set_sockets(static_cast<uint32_t>(host.sockets));
  request.set_cores_per_socket(static_cast<uint32_t>(host.cores_per_socket));
  request.set_threads_per_core(static_cast<uint32_t>(host.threads_per_core));
  request.set_memory_mb(host.memory_mb);
  request.set_gpus(static_cast<uint32_t>(agent_.gpus().gpus.size()));
  request.set_gpu_source(GpuSourceName(agent_.gpus().source));
  for (const Gpu& gpu : agent_.gpus().gpus) {
    v1::GpuIdentity* identity = request.add_gpu_list();
    identity->set_index(gpu.index);
    identity->set_type(gpu.type);
    identity->set_name(gpu.name);
    identity->set_uuid(gpu.uuid);
    identity->set_memory_mb(gpu.memory_mb);
    identity->set_pci_bus_id(gpu.pci_bus_id);
    if (gpu.minor >= 0) identity->set_minor(gpu.minor);
    for (int core : gpu.cores) identity->add_cores(core);
    for (int link : gpu.links) identity->add_links(link);
  }
  for (uint64_t id : agent_.RunningJobs()) request.add_running_jobs(id);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1::RegisterReply reply;
  grpc::Status status = stub_->Register(&context, request, &reply);
  if (!status.ok()) {
    if (registered_ || status.error_code() != grpc::StatusCode::UNAVAILABLE)
      Log("cannot register with the controller at " + options_.controller + ": " +
          status.error_message());
    registered_ = false;
    return false;
  }
  agent_.NoteController();
  if (!registered_)
    Log("registered with the controller at " + options_.controller + " (" +
        std::to_string(request.running_jobs_size()) + " running jobs)");
  registered_ = true;
  return true;
}

void ControllerLink::Heartbeat() {
  v1::HeartbeatRequest request;
  request.set_node(agent_.node_name());
  request.set_healthy(healthy_);
  request.set_health_output(health_output_);
  request.set_health_latched(health_latched_);
  for (const GpuReading& reading : gpu_readings_) wire::ToProto(reading, request.add_gpus());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1::HeartbeatReply reply;
  grpc::Status status = stub_->Heartbeat(&context, request, &reply);
  if (status.ok()) {
    agent_.NoteController();
    health_delivered_ = true;
  }
  if (!status.ok() || reply.reregister()) registered_ = false;
}

void ControllerLink::ReportEnded() {
  std::vector<EndedJob> ended_jobs = agent_.EndedJobs();
  if (ended_jobs.empty()) return;
  // Every report at once, so that they share the controller's commits; each is kept until its
  // reply says the end is committed.
  struct Call {
    v1::JobEndedRequest request;
    v1::JobEndedReply reply;
    grpc::ClientContext context;
    grpc::Status status;
  };
  std::vector<std::unique_ptr<Call>> calls;
  struct Replies {
    Mutex mutex;
    CondVar all_back;
    size_t back GUARDED_BY(mutex) = 0;
  } replies;
  for (const EndedJob& ended : ended_jobs) {
    auto call = std::make_unique<Call>();
    v1::JobEndedRequest& request = call->request;
    request.set_job_id(ended.job_id);
    request.set_node(agent_.node_name());
    request.set_exit_code(ended.status.exit_code);
    request.set_signal(ended.status.signal);
    request.set_out_of_memory(ended.status.out_of_memory);
    request.set_prolog_failed(ended.status.prolog_failed);
    request.set_epilog_failed(ended.status.epilog_failed);
    request.set_launch_failed(ended.status.launch_failed);
    request.set_reason(ended.status.reason);
    request.set_restart_count(ended.restart_count);
    request.set_cpu_seconds(ended.status.cpu_seconds);
    request.set_max_rss_mib(ended.status.max_rss_mib);
    if (ended.status.start_time != 0 && !ended.status.launch_failed)  // the batch shell ran
      wire::ToProto(OneTask(agent_.node_name(), 0, ended.status.batch_user_cpu,
                            ended.status.batch_system_cpu, ended.status.batch_rss_kib),
                    request.mutable_batch_usage());
    call->context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    Call* raw = call.get();
    calls.push_back(std::move(call));
    stub_->async()->JobEnded(&raw->context, &raw->request, &raw->reply,
                             [&, raw](grpc::Status status) {
                               MutexLock lock(replies.mutex);
                               raw->status = std::move(status);
                               ++replies.back;
                               replies.all_back.NotifyOne();
                             });
  }
  MutexLock lock(replies.mutex);
  replies.all_back.Wait(replies.mutex,
                        [&]() REQUIRES(replies.mutex) { return replies.back == calls.size(); });
  for (const auto& call : calls)
    if (call->status.ok()) agent_.Reported(call->request.job_id(), call->request.restart_count());
}

void ControllerLink::RunHealthCheck() {
  std::string output;
  bool ok = options_.health_program.empty() ||
            RunHealthProgram(options_.health_program, std::chrono::seconds(60), output);
  // The built-in GPU probes: their problems come first in the reason, since they name the GPU.
  bool event = false;
  std::string gpu_problem;
  if (gpu_probe_) {
    gpu_readings_ = gpu_probe_->Probe();
    gpu_problem = GpuHealthVerdict(gpu_readings_, event);
  }
  // A latched problem is reported until the controller has heard it, even once it cleared.
  if (ok && gpu_problem.empty() && !healthy_ && health_latched_ && !health_delivered_) return;
  if (!gpu_problem.empty()) {
    output = ok ? gpu_problem : gpu_problem + "; " + output;
    if (output.size() > 200) output = output.substr(0, 200);
    ok = false;
  }
  if (ok != healthy_ || (!ok && output != health_output_))
    Log(ok ? "health check passes again" : "health check failed: " + output);
  if (ok != healthy_ || (!ok && output != health_output_)) health_delivered_ = false;
  healthy_ = ok;
  health_output_ = ok ? "" : output;
  // A GPU's trouble holds the node drained once cleared unless the site resumes such nodes; an
  // XID (an event that leaves no condition behind) always does.
  health_latched_ = !gpu_problem.empty() && (event || !options_.gpu_health_resume);
}

void ControllerLink::Run() {
  auto next_heartbeat = Clock::now();
  auto next_health = Clock::now();
  bool health = !options_.health_program.empty() || gpu_probe_;
  while (true) {
    {
      MutexLock lock(mutex_);
      wake_.WaitFor(mutex_, options_.poll, [&]() REQUIRES(mutex_) { return stop_ || woken_; });
      if (stop_) return;
      woken_ = false;
    }
    RunReboot();
    auto now = Clock::now();
    if (health && now >= next_health) {
      RunHealthCheck();
      next_health = now + (options_.health_interval.count() > 0 ? options_.health_interval
                                                                : std::chrono::hours(24 * 365));
      next_heartbeat = now;  // tell the controller at once
    }
    if (!registered_ && !Register()) {
      MutexLock lock(mutex_);
      wake_.WaitFor(mutex_, std::chrono::milliseconds(500),
                    [&]() REQUIRES(mutex_) { return stop_; });
      continue;
    }
    if (now >= next_heartbeat) {
      Heartbeat();
      next_heartbeat = now + options_.heartbeat;
      if (!registered_) continue;
    }
    ReportEnded();
  }
}

}  // namespace drover::agent
