// One srun step on this node, from srun's launch to its tasks' ends (Agent::RunStep): the tasks
// start in the job's cgroup, as the job's user, with Slurm's per-task environment; their stdout
// and stderr go back on the RunStep stream (or to the files srun named), srun's stdin reaches
// task 0 and its signals every task. The tasks are the agent's children, so an agent restart
// ends the step's stream (the batch script, under droverstepd, lives on). Never outlives the
// stream it serves.
#pragma once

#include <poll.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "agent/daemon/agent.h"
#include "agent/host/cgroup.h"
#include "agent/host/job_env.h"
#include "agent/host/output_path.h"
#include "agent/host/pmi_wire.h"
#include "agent/host/spawn.h"
#include "common/job_spec.h"
#include "common/mutex.h"
#include "common/resource_limits.h"
#include "common/task_binding.h"
#include "proto/drover.pb.h"

namespace drover::agent {

// Its phases, in the order Run takes them: resolve the job (wait for its launch here, check the
// user), resolve the user and the job's cgroup, build the environment, start the tasks, then pump
// srun's input (a thread: stdin, signals) and the tasks' output and ends (this thread) until every
// task has ended and srun has closed its side.
class StepSession {
 public:
  StepSession(Agent& agent, const v1::StepLaunch& launch, const Agent::StepWrite& write,
              const Agent::StepRead& read, const std::function<void()>& cancel);
  ~StepSession();
  StepSession(const StepSession&) = delete;
  StepSession& operator=(const StepSession&) = delete;
  Status Run();

 private:
  // One task of the step on this node; the output thread's alone.
  struct Task {
    uint32_t rank = 0;
    pid_t pid = -1;
    int out = -1, err = -1;  // our ends of its stdout/stderr (-1: to a file, or closed)
    bool ended = false;
    int status = 0;
    std::vector<std::string> environment;                 // for its --task-epilog
    double user_cpu_seconds = 0, system_cpu_seconds = 0;  // its rusage, once reaped
    uint64_t rss_kib = 0;
  };
  // A task's descriptors while it starts: the child's ends go to Spawn, ours stay.
  struct TaskIo {
    int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, in_pipe[2] = {-1, -1};
    int master = -1, slave = -1;  // srun --pty: task 0's pseudo-terminal
    void CloseAll();
  };

  // Resolving (step_session.cc).
  const v1::Job& job() const { return launch_.job(); }
  Status ResolveJob();
  Status WaitForLaunch();
  void ResolveUser();
  void FindCgroup();
  Status FindContainer();
  void BuildEnvironment();
  void SetGpuVariables();
  bool ConfineStepDevices(const std::vector<uint32_t>& job_gpus,
                          const std::vector<uint32_t>& step_gpus);
  void SetDistribution();
  void ChooseWorkDir();
  Status PrepareOutputFile(const std::string& pattern, uint32_t rank, std::string& resolved);

  // Binding (step_binding.cc): what each task is bound to, set between its fork and exec.
  struct TaskBinding {
    std::optional<std::vector<int>> cpus;  // host CPUs; none: unbound
    std::optional<ProcessSpec::MemoryPolicy> memory;
    std::vector<uint32_t> memory_nodes;
    std::optional<std::vector<uint32_t>> gpus;  // --gpu-bind's share of the step's GPUs
  };
  Status ResolveBinding();
  void SetBindingVariables();
  Result<TaskBinding> BindingOf(uint32_t local) const;
  void SetTaskGpus(const TaskBinding& binding, std::vector<std::string>& env) const;
  // Its verbose lines, which the task's child writes on its own stderr (ProcessSpec::stderr_note).
  std::string ApplyBinding(pid_t pid, uint32_t rank, uint32_t local, const TaskBinding& binding);

  // Starting (step_tasks.cc).
  Status WriteBcastFiles();  // step_bcast.cc
  Status StartTasks();
  Status StartTask(uint32_t rank, uint32_t local);
  std::vector<std::string> CommandOf(uint32_t rank) const;
  Status DescribeIo(uint32_t rank, ProcessSpec& spec, TaskIo& io);
  Status OpenTerminal(ProcessSpec& spec, TaskIo& io);
  Status OpenPipes(uint32_t rank, const std::string& out_path, const std::string& err_path,
                   const std::string& in_path, ProcessSpec& spec, TaskIo& io);
  Status JoinJob(pid_t pid, uint32_t rank, uint32_t local);
  std::string RunTaskScript(const std::string& program, const std::vector<std::string>& env);
  void RunTaskProlog(uint32_t rank, const ProcessSpec& task, std::vector<std::string>& env);
  void KeepOurEnds(Task& task, TaskIo& io);
  void ReportExecFailure(Task& task, const std::string& program, int error);
  Status Fail(const std::string& message);

  // PMI (step_pmi.cc): srun --mpi=pmi2's wire server here, or this node's part of the agent's
  // PMIx server; fences become collectives of the step's nodes through srun.
  Status StartPmi();
  Status SetupPmiTask(uint32_t rank, uint32_t local, ProcessSpec& spec);
  void PmiTaskSpawned(uint32_t local);
  void AddPmiPolls(std::vector<pollfd>& fds, std::vector<int>& owners) const;
  // `fds`: those AddPmiPolls added, polled; `owners` as it left them.
  void ServePmi(std::span<const pollfd> fds, const std::vector<int>& owners);
  // Sends this node's part and calls `done` (on the input thread) with every node's.
  void Contribute(std::string part, std::function<void(bool, std::vector<std::string>)> done)
      EXCLUDES(collective_mutex_);
  void OnCollective(const v1::StepCollective& collective) EXCLUDES(collective_mutex_);
  void SendCollectives() EXCLUDES(collective_mutex_);
  void AbortStep(const std::string& why);
  void RequestAbort(std::string why) EXCLUDES(collective_mutex_);  // any thread
  void StopPmi() EXCLUDES(collective_mutex_);

  // sattach (step_attach.cc): the step opened to listeners once its tasks run, each output told
  // to them as to srun, and closed when its tasks have ended.
  void OpenToAttach();
  void TellAttached(const v1::StepOutput& message);
  void CloseToAttach();
  // Task 0's stdin (step_io.cc): what srun and sattach send is queued and written by a thread
  // of its own, so a task that does not read never holds up the step's stream (and the PMI
  // fences on it). `may_wait`: past kStdinQueueMost the caller waits (srun: its input is held
  // back); else what does not fit is dropped (sattach).
  void WriteStdin(const std::string& data, bool may_wait) EXCLUDES(stdin_mutex_);
  void CloseStdin() EXCLUDES(stdin_mutex_);  // once what is queued is written
  void PumpStdin() EXCLUDES(stdin_mutex_);
  void StopStdin() EXCLUDES(stdin_mutex_);  // the tasks have ended: written or not, it ends
  static constexpr size_t kStdinQueueMost = size_t{16} << 20;

  // Running (step_io.cc).
  void SignalTasks(int signal) EXCLUDES(signal_mutex_);
  void PumpInput() EXCLUDES(input_mutex_);
  void PumpOutput();
  void PollOutput();
  void Drain(Task& task, int& fd, bool is_stderr, bool until_empty);
  void Reap(size_t index, v1::StepOutput& ends);
  void SayTaskEnd(const Task& task);
  static constexpr int kStepdVerbose = 4;  // Slurm's log level numbers (srun --slurmd-debug)
  void FinishInput() EXCLUDES(input_mutex_);

  Agent& agent_;
  const v1::StepLaunch& launch_;
  const Agent::StepWrite& write_;
  const Agent::StepRead& read_;
  const std::function<void()>& cancel_;

  // What the phases resolve, before any task starts.
  uint64_t job_id_ = 0;
  JobSpec spec_;
  UserAccount account_;
  std::optional<ProcessUser> user_;  // set when the agent is root and switches to the job's user
  std::optional<JobCgroup> cgroup_;
  int mount_namespace_ = -1;  // the job's private /tmp (job_container/tmpfs), open; -1: none
  std::filesystem::path step_cgroup_;      // the step's own, inside the job's (ConfineStepDevices)
  std::vector<std::string> environment_;   // what every task shares
  std::string task_prolog_, task_epilog_;  // srun --task-prolog/--task-epilog, if given
  std::vector<PropagatedLimit> limits_;    // srun --propagate, PropagateResourceLimits
  std::string bcast_program_;              // srun --bcast: the copy the tasks run
  std::string work_dir_;
  PatternContext pattern_;
  std::map<std::string, bool> prepared_;  // output files made (and truncated once)
  // The binding's inputs (ResolveBinding): the options, the node's shape, the step's abstract
  // CPUs here, the agent's own CPUs, the step's GPUs (node indexes) and how the tasks number them.
  CpuBind cpu_bind_;
  MemBind mem_bind_;
  GpuBind gpu_bind_;
  bool gpu_bind_given_ = false, affinity_ = false;
  NodeShape node_shape_;
  std::vector<uint32_t> step_cpus_;
  std::vector<int> host_cpus_;
  uint32_t numa_nodes_ = 1;
  std::string socket_distribution_;
  std::vector<uint32_t> step_gpus_, visible_gpus_;

  std::vector<Task> tasks_;
  std::shared_ptr<Agent::StepListeners> listeners_;  // sattach's, while the tasks run

  // PMI: the wire server and our ends of the tasks' sockets (by local index, -1: closed), or the
  // PMIx namespace; collectives between this thread, the input thread and the PMIx server's.
  std::string mpi_;              // "", "pmi2" or "pmix"
  std::string process_mapping_;  // PMI_process_mapping, SLURM_PMIX_MAPPING_SERV
  std::unique_ptr<PmiWireServer> pmi_;
  std::vector<int> pmi_fds_, pmi_child_fds_;
  std::vector<std::string> pmi_out_;  // replies the task's socket has not taken yet
  // The PMIx server's callbacks reach the session through this, until StopPmi.
  struct PmixLink {
    std::mutex mutex;
    StepSession* session = nullptr;
  };
  std::shared_ptr<PmixLink> pmix_link_;
  std::string pmix_space_;
  int wake_fd_ = -1;  // an eventfd: a collective to send or a fence's parts to hand out
  bool abort_sent_ = false;
  Mutex collective_mutex_;
  uint32_t next_collective_ GUARDED_BY(collective_mutex_) = 0;
  std::vector<v1::StepOutput> outgoing_ GUARDED_BY(collective_mutex_);
  std::map<uint32_t, std::function<void(bool, std::vector<std::string>)>> waiting_
      GUARDED_BY(collective_mutex_);
  std::vector<std::pair<bool, std::vector<std::string>>> fence_results_
      GUARDED_BY(collective_mutex_);
  std::optional<std::string> abort_request_ GUARDED_BY(collective_mutex_);

  // Signals from srun (the input thread) and the end of each task (this thread) meet here: a
  // process group is signalled only while its task is not yet reaped.
  Mutex signal_mutex_;
  std::vector<pid_t> live_groups_ GUARDED_BY(signal_mutex_);  // by task index; -1: reaped

  // Task 0's stdin: this thread's while tasks start, then the stdin thread's alone (PumpStdin).
  int stdin_fd_ = -1;
  Mutex stdin_mutex_;
  CondVar stdin_changed_;
  std::deque<std::string> stdin_queue_ GUARDED_BY(stdin_mutex_);
  size_t stdin_queued_ GUARDED_BY(stdin_mutex_) = 0;
  bool stdin_closing_ GUARDED_BY(stdin_mutex_) = false;
  bool stdin_abandoned_ GUARDED_BY(stdin_mutex_) = false;
  bool stdin_live_ = false;  // the stdin thread runs (set before any other thread starts)
  std::thread stdin_writer_;
  bool task0_here_ = false;
  std::thread input_;
  std::atomic<bool> all_ended_{false};
  Mutex input_mutex_;
  CondVar input_finished_;
  bool input_done_ GUARDED_BY(input_mutex_) = false;
};

}  // namespace drover::agent
