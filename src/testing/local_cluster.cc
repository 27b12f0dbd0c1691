// See local_cluster.h.
#include "testing/local_cluster.h"

#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "auth/grpc_auth.h"

namespace drover::testing {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

int Daemon::Start(std::vector<std::string> argv, const fs::path& log, const fs::path& port_file) {
  fs::remove(port_file);
  pid_ = fork();
  if (pid_ == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, 2);
    std::vector<char*> args;
    for (std::string& arg : argv) args.push_back(arg.data());
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  int port = 0;
  for (int i = 0; i < 500 && port == 0; ++i) {
    std::this_thread::sleep_for(10ms);
    std::ifstream(port_file) >> port;
  }
  return port;
}

void Daemon::Stop(int signal) {
  if (pid_ <= 0) return;
  ::kill(pid_, signal);
  waitpid(pid_, nullptr, 0);
  pid_ = 0;
}

void Daemon::Signal(int signal) {
  if (pid_ > 0) ::kill(pid_, signal);
}

void Daemon::StopWithin(std::chrono::milliseconds limit) {
  if (pid_ <= 0) return;
  for (auto deadline = std::chrono::steady_clock::now() + limit;
       waitpid(pid_, nullptr, WNOHANG) == 0;) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      break;
    }
    std::this_thread::sleep_for(10ms);
  }
  pid_ = 0;
}

namespace {

std::string UserName() {
  if (passwd* entry = getpwuid(getuid()); entry && entry->pw_name) return entry->pw_name;
  return std::to_string(getuid());
}

}  // namespace

LocalCluster::LocalCluster(ClusterPaths paths, std::string conf, std::vector<std::string> nodes)
    : paths_(std::move(paths)), nodes_(std::move(nodes)) {
  char pattern[] = "/tmp/drover_cluster_XXXXXX";
  if (mkdtemp(pattern)) dir_ = pattern;
  std::error_code error;
  fs::permissions(dir_, fs::perms::all, error);
  std::ofstream(dir_ / "slurm.conf")
      << "SlurmctldHost=localhost(127.0.0.1)\n"
      << conf << "\nAuthType=auth/slurm\nAuthInfo=key=" << (dir_ / "slurm.key").string()
      << ",socket=" << (dir_ / "auth.socket").string() << "\nSlurmUser=" << UserName() << "\n";
  if (Status written = auth::WriteKey((dir_ / "slurm.key").string(), false); !written)
    error_ = written.error();
}

void LocalCluster::As(grpc::ClientContext& context, uint32_t uid, uint32_t gid) {
  ConfigLoad load = LoadClusterConfig((dir_ / "slurm.conf").string());
  auto settings = auth::SettingsOf(load.config);
  auto credential = settings ? auth::CredentialFor(*settings, {uid, gid})
                             : Result<std::string>(MakeError(settings.error()));
  if (credential) context.AddMetadata(auth::kCredentialHeader, *credential);
}

LocalCluster::~LocalCluster() {
  ctld_.Stop(SIGKILL);
  // Jobs' supervisors outlive their agents by design: cancel what is left by PID (SIGTERM:
  // the supervisor ends every process of its job and removes its cgroup), then make sure.
  std::error_code error;
  std::vector<pid_t> supervisors;
  for (const auto& entry : fs::recursive_directory_iterator(dir_ / "spool", error))
    if (entry.path().filename() == "supervisor.pid") {
      std::ifstream in(entry.path());
      for (std::string line; std::getline(in, line);)
        if (line.starts_with("pid=")) supervisors.push_back(std::stoi(line.substr(4)));
    }
  for (pid_t pid : supervisors) {
    ::kill(pid, SIGCONT);
    ::kill(pid, SIGTERM);
  }
  WaitFor(
      [&] {
        for (pid_t pid : supervisors)
          if (::kill(pid, 0) == 0) return false;
        return true;
      },
      std::chrono::seconds(5));
  for (pid_t pid : supervisors) ::kill(pid, SIGKILL);
  // Then the agents, asked to stop (SIGKILL after 5 s): on their way out they remove their
  // nodes' cgroup levels, now empty, which would otherwise pile up on the host with every test.
  for (auto& [name, agent] : agents_) agent->Signal(SIGTERM);
  for (auto& [name, agent] : agents_) agent->StopWithin(std::chrono::seconds(5));
  if (std::getenv("DROVER_KEEP_CLUSTER"))  // for a person debugging: keep state and logs
    std::fprintf(stderr, "cluster state and logs kept in %s\n", dir_.c_str());
  else
    fs::remove_all(dir_, error);
}

bool LocalCluster::Boot() {
  int port = ctld_.Start({paths_.droverctld, "--conf", (dir_ / "slurm.conf").string(), "--state",
                          (dir_ / "state").string(), "--listen", "127.0.0.1:0", "--port-file",
                          (dir_ / "ctld.port").string(), "--http-listen", "127.0.0.1:0"},
                         dir_ / "ctld.log", dir_ / "ctld.port");
  if (port == 0) {
    error_ = "droverctld did not start";
    return false;
  }
  controller_ = "127.0.0.1:" + std::to_string(port);
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  ConfigLoad load = LoadClusterConfig((dir_ / "slurm.conf").string());
  auto settings = auth::SettingsOf(load.config);
  auto authenticator =
      settings ? auth::Create(*settings, auth::Role::kClient)
               : Result<std::unique_ptr<auth::Authenticator>>(MakeError(settings.error()));
  if (!authenticator) {
    error_ = authenticator.error();
    return false;
  }
  authenticator_ = std::move(*authenticator);
  auto channel = auth::NewChannel(controller_, load.config, args, *authenticator_);
  if (!channel) {
    error_ = channel.error();
    return false;
  }
  stub_ = v1::Controller::NewStub(*channel);
  for (const std::string& node : nodes_)
    if (!StartAgent(node)) return false;
  bool idle = WaitFor([&] {
    std::map<std::string, v1::NodeStatus> nodes = Nodes();
    for (const std::string& node : nodes_)
      if (nodes[node].state() != "IDLE") return false;
    return true;
  });
  if (!idle) error_ = "the nodes did not all become IDLE";
  return idle;
}

bool LocalCluster::StartAgent(const std::string& node) {
  auto& agent = agents_[node];
  if (!agent) agent = std::make_unique<Daemon>();
  std::vector<std::string> argv = {paths_.droverd,
                                   "-N",
                                   node,
                                   "--conf",
                                   (dir_ / "slurm.conf").string(),
                                   "--emulate",
                                   "--spool",
                                   (dir_ / "spool" / node).string(),
                                   "--listen",
                                   "127.0.0.1:0",
                                   "--port-file",
                                   (dir_ / (node + ".port")).string(),
                                   "--controller",
                                   controller_};
  argv.insert(argv.end(), agent_args_.begin(), agent_args_.end());
  int port = agent->Start(std::move(argv), dir_ / (node + ".log"), dir_ / (node + ".port"));
  if (port == 0) error_ = "droverd " + node + " did not start";
  return port != 0;
}

void LocalCluster::StopAgent(const std::string& node, int signal) {
  if (auto it = agents_.find(node); it != agents_.end()) it->second->Stop(signal);
}

std::string LocalCluster::Logs() const {
  std::ostringstream text;
  std::vector<std::string> logs{"ctld.log"};
  for (const std::string& node : nodes_) logs.push_back(node + ".log");
  for (const std::string& log : logs) {
    std::ifstream in(dir_ / log);
    text << "--- " << log << "\n" << in.rdbuf();
  }
  return text.str();
}

std::map<std::string, v1::NodeStatus> LocalCluster::Nodes() {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 5s);
  v1::NodeList list;
  std::map<std::string, v1::NodeStatus> nodes;
  if (stub_->ListNodes(&context, v1::NodeQuery(), &list).ok())
    for (const v1::NodeStatus& node : list.nodes()) nodes[node.name()] = node;
  return nodes;
}

v1::Job LocalCluster::Job(uint64_t id) {
  v1::JobQuery query;
  query.mutable_filter()->add_job_ids(id);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 5s);
  v1::JobList list;
  v1::Job job;
  if (stub_->ListJobs(&context, query, &list).ok() && list.jobs_size() == 1)
    job.ParseFromString(list.jobs(0));
  return job;
}

bool LocalCluster::WaitFor(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

}  // namespace drover::testing
