// drover up / down / status / env: a whole cluster on this machine — droverctld and emulated
// droverds for the nodes of a configuration — started in the background on loopback, with
// its state, logs and effective configuration in one directory.
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "auth/auth.h"
#include "auth/grpc_auth.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "common/cluster_config.h"
#include "common/getopt.h"
#include "common/hostlist.h"
#include "common/process_file.h"
#include "common/text.h"
#include "proto/drover.grpc.pb.h"

namespace drover::cli {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Keys `drover up` sets in the effective slurm.conf; the configuration's own are dropped.
constexpr std::string_view kOverridden[] = {
    "slurmctldhost",     "controlmachine",    "controladdr",    "slurmctldport",
    "slurmdport",        "statesavelocation", "slurmdspooldir", "slurmctldlogfile",
    "slurmdlogfile",     "slurmctldpidfile",  "slurmdpidfile",  "drovercontrollerlisten",
    "droveragentlisten", "authtype",          "authinfo",       "slurmuser",
    "authalttypes",      "authaltparameters"};

struct Options {
  std::string conf, state;
  std::string nvml;  // up --nvml LIB: every agent's GPUs are that NVML library's
  bool help = false;
};

constexpr OptionSpec kWithConf[] = {
    {'h', "help", OptionSpec::kNone},
    {0, "state", OptionSpec::kRequired},
    {0, "conf", OptionSpec::kRequired},
    {0, "nvml", OptionSpec::kRequired},
};
constexpr std::span<const OptionSpec> kWithoutConf(kWithConf, 2);

std::optional<Options> Parse(Arguments args, std::string_view command, bool takes_conf) {
  std::vector<std::string> words(args.begin(), args.end());
  OptionScan scan =
      ScanOptions(words, takes_conf ? std::span<const OptionSpec>(kWithConf) : kWithoutConf);
  if (std::optional<size_t> refused = FirstRefused(scan)) {
    const std::string& word = words[*refused];
    const OptionSpec* lacks_value = *refused == scan.error_argument ? scan.lacks_value : nullptr;
    if (lacks_value && lacks_value->long_name == "conf")
      fmt::print(stderr, "drover {}: --conf needs a slurm.conf\n", command);
    else if (lacks_value && lacks_value->long_name == "nvml")
      fmt::print(stderr, "drover {}: --nvml needs a library (libnvidia-ml.so.1)\n", command);
    else if (lacks_value)
      fmt::print(stderr, "drover {}: --state needs a directory\n", command);
    else
      fmt::print(stderr, "drover {}: unknown argument '{}'; see drover {} --help\n", command, word,
                 command);
    return std::nullopt;
  }
  Options options;
  for (const OptionUse& use : scan.uses) {
    if (use.spec->long_name == "help") options.help = true;
    if (use.spec->long_name == "state") options.state = *use.value;
    if (use.spec->long_name == "conf") options.conf = *use.value;
    if (use.spec->long_name == "nvml") options.nvml = *use.value;
  }
  return options;
}

fs::path BinDir() {
  return fs::read_symlink("/proc/self/exe").parent_path();
}

fs::path DefaultConf() {
  return fs::path(DROVER_SOURCE_DIR) / "examples" / "demo" / "slurm.conf";
}

// $XDG_STATE_HOME/drover/NAME, or ~/.local/state/drover/NAME.
fs::path DefaultState(const std::string& name) {
  const char* xdg = std::getenv("XDG_STATE_HOME");
  const char* home = std::getenv("HOME");
  fs::path base = xdg && *xdg     ? fs::path(xdg)
                  : home && *home ? fs::path(home) / ".local" / "state"
                                  : fs::path("/tmp");
  return base / "drover" / name;
}

// The state directory: --state, else the one `drover up` last used, else the default for
// the demo cluster.
fs::path StateDir(const Options& options) {
  if (!options.state.empty()) return fs::absolute(options.state);
  fs::path last = DefaultState("") / "last";
  std::ifstream in(last);
  std::string path;
  if (std::getline(in, path) && !path.empty()) return path;
  return DefaultState("demo");
}

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0)
    port = ntohs(address.sin_port);
  close(fd);
  return port;
}

std::string Key(std::string_view line) {
  std::string_view text = Trim(line);
  size_t eq = text.find('=');
  return eq == std::string_view::npos ? "" : ToLower(Trim(text.substr(0, eq)));
}

// The controllers `drover up` starts: one, or one per SlurmctldHost line of a configuration that
// names several (high availability, on the database slurm.conf names), each on its own port.
struct LocalController {
  std::string name;     // its SlurmctldHost name (droverctld --name)
  std::string process;  // in pids/ and logs/: "ctld" for the first, "ctld-NAME" after
  int port = 0;
};

std::vector<LocalController> Controllers(const ClusterSettings& settings) {
  std::vector<LocalController> controllers;
  if (settings.controller_hosts.size() < 2) return {{"localhost", "ctld", FreePort()}};
  for (const ControllerHost& host : settings.controller_hosts)
    controllers.push_back(
        {host.name, controllers.empty() ? "ctld" : "ctld-" + host.name, FreePort()});
  return controllers;
}

bool IsController(const std::string& process) {
  return process == "ctld" || process.starts_with("ctld-");
}

// Writes state/slurm.conf: the configuration with this cluster's ports and directories, and
// its gres.conf, topology.conf and cgroup.conf beside it.
Status WriteEffectiveConfig(const fs::path& conf, const fs::path& state,
                            const std::vector<LocalController>& controllers) {
  const int port = controllers.front().port;
  std::ifstream in(conf);
  if (!in) return MakeError(fmt::format("cannot read {}", conf.string()));
  std::ostringstream out;
  out << "# Written by `drover up` from " << fs::absolute(conf).string()
      << ": this cluster's ports and directories are at the end.\n";
  fs::path dir = fs::absolute(conf).parent_path();
  for (std::string line; std::getline(in, line);) {
    std::string key = Key(line);
    bool dropped = false;
    for (std::string_view overridden : kOverridden) dropped = dropped || key == overridden;
    if (dropped) {
      out << "# (drover up) " << line << "\n";
      continue;
    }
    std::string_view text = Trim(line);
    if (StartsWithIgnoreCase(text, "include ")) {
      fs::path target(std::string(Trim(text.substr(8))));
      out << "Include " << (target.is_absolute() ? target : dir / target).string() << "\n";
      continue;
    }
    out << line << "\n";
  }
  out << "\n# drover up\n";
  if (controllers.size() == 1) {
    out << "SlurmctldHost=localhost(127.0.0.1)\n";
  } else {
    for (const LocalController& controller : controllers)
      out << "SlurmctldHost=" << controller.name << "(127.0.0.1:" << controller.port << ")\n";
  }
  out << "SlurmctldPort=" << port << "\n"
      << "DroverControllerListen=127.0.0.1\nDroverAgentListen=127.0.0.1\n"
      << "StateSaveLocation=" << (state / "ctld").string() << "\n"
      << "SlurmdSpoolDir=" << (state / "spool" / "%n").string()
      << "\n"
      // Authenticated like a real cluster, with this cluster's own key; its daemons run as the
      // user who started it, so that user is SlurmUser.
      << "AuthType=auth/slurm\n"
      << "AuthInfo=key=" << (state / "slurm.key").string()
      << ",socket=" << (state / "run" / "auth.socket").string() << "\n"
      << "SlurmUser=" << Me().user
      << "\n"
      // Tokens for the REST API (`scontrol token`, `drover restd`), signed with its own key.
      << "AuthAltTypes=auth/jwt\n"
      << "AuthAltParameters=jwt_key=" << (state / "jwt_hs256.key").string() << "\n";
  std::ofstream(state / "slurm.conf") << out.str();
  for (const char* companion :
       {"gres.conf", "topology.conf", "cgroup.conf", "job_container.conf"}) {
    std::error_code error;
    if (fs::exists(dir / companion))
      fs::copy_file(dir / companion, state / companion, fs::copy_options::overwrite_existing,
                    error);
    if (error) return MakeError(fmt::format("cannot copy {}: {}", companion, error.message()));
  }
  return OkStatus();
}

// Starts `argv` detached (its own session), stdout and stderr to `log`; its PID and start time
// go to pids/NAME so `drover down` stops exactly it.
Result<pid_t> Spawn(const fs::path& state, const std::string& name, std::vector<std::string> argv) {
  fs::path log = state / "logs" / (name + ".log");
  pid_t pid = fork();
  if (pid < 0) return MakeError("cannot fork");
  if (pid == 0) {
    setsid();
    int null = open("/dev/null", O_RDONLY);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (null >= 0) dup2(null, 0);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    std::vector<char*> args;
    for (std::string& arg : argv) args.push_back(arg.data());
    args.push_back(nullptr);
    execv(args[0], args.data());
    std::fprintf(stderr, "cannot run %s\n", args[0]);
    _exit(127);
  }
  if (Status written = WriteProcessFile(state / "pids" / name, pid); !written)
    return std::move(written).take_error();
  return pid;
}

struct Recorded {
  std::string name;
  ProcessRecord record;
  bool alive = false;
};

std::vector<Recorded> Processes(const fs::path& state) {
  std::vector<Recorded> found;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(state / "pids", error)) {
    auto record = ReadProcessFile(entry.path());
    if (!record) continue;
    found.push_back({entry.path().filename().string(), *record, ProcessAlive(*record)});
  }
  std::sort(found.begin(), found.end(), [](const Recorded& a, const Recorded& b) {
    return IsController(a.name) != IsController(b.name) ? IsController(a.name) : a.name < b.name;
  });
  return found;
}

// This cluster's node states; empty when the controller cannot be asked.
std::map<std::string, std::string> NodeStates(const ClusterConfig& cluster) {
  std::map<std::string, std::string> states;
  auto settings = auth::SettingsOf(cluster);
  if (!settings) return states;
  auto authenticator = auth::Create(*settings, auth::Role::kClient);
  if (!authenticator) return states;
  // Whichever controller leads (a standby refuses the call).
  for (const std::string& address : ControllerAddresses(cluster.settings)) {
    auto channel = auth::NewChannel(address, cluster, grpc::ChannelArguments(), **authenticator);
    if (!channel) continue;
    auto stub = v1::Controller::NewStub(*channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 2s);
    v1::NodeList list;
    if (!stub->ListNodes(&context, v1::NodeQuery(), &list).ok()) continue;
    for (const v1::NodeStatus& node : list.nodes()) states[node.name()] = node.state();
    break;
  }
  return states;
}

void PrintLogTail(const fs::path& log) {
  std::ifstream in(log);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  size_t from = lines.size() > 8 ? lines.size() - 8 : 0;
  fmt::print(stderr, "--- {}\n", log.string());
  for (size_t i = from; i < lines.size(); ++i) fmt::print(stderr, "  {}\n", lines[i]);
}

void PrintEnv(const fs::path& state) {
  fmt::print("export DROVER_CONF={}\n", (state / "slurm.conf").string());
  fmt::print("export PATH={}:$PATH\n", BinDir().string());
}

// SIGTERM to each process, then waits for all of them until `grace` has passed; SIGKILL to those
// still alive then. Each is looked at (its pid and start time) right before it is signalled: one
// that ended since it was found is not there to signal, and its pid may be another's by now.
void StopProcesses(const std::vector<ProcessRecord>& processes, std::chrono::seconds grace) {
  for (const ProcessRecord& process : processes)
    if (ProcessAlive(process)) ::kill(process.pid, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + grace;
  for (const ProcessRecord& process : processes) {
    while (ProcessAlive(process) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(20ms);
    if (ProcessAlive(process)) ::kill(process.pid, SIGKILL);
  }
}

// Stops the cluster: the controller first (so it starts nothing more), then the jobs' supervisors
// (each cancels its job as scancel does: SIGTERM, SIGKILL after KillWait, then removes the job's
// cgroup), then the agents, which remove their nodes' cgroup levels once no job is left in them
// (stopped before the supervisors, they would leave those levels behind). Each stage waits for
// its processes and SIGKILLs those still alive after 10 s (the supervisors: KillWait, plus
// PrologEpilogTimeout with an Epilog, + 10 s). Returns how many processes were stopped.
int StopAll(const fs::path& state) {
  std::vector<Recorded> processes = Processes(state);
  int stopped = 0;
  auto stop = [&](const std::vector<ProcessRecord>& batch, std::chrono::seconds grace) {
    StopProcesses(batch, grace);
    stopped += static_cast<int>(batch.size());
  };
  std::vector<ProcessRecord> controller, agents, supervisors;
  for (const Recorded& process : processes)
    if (process.alive) (IsController(process.name) ? controller : agents).push_back(process.record);
  stop(controller, 10s);
  // spool/NODE/job_ID/supervisor.pid. The agents still run, and may move a job's directory away
  // (into done/) meanwhile: a directory that is gone is passed over.
  std::error_code error;
  for (const auto& node : fs::directory_iterator(state / "spool", error)) {
    std::error_code inner;
    for (const auto& job : fs::directory_iterator(node.path(), inner))
      if (job.path().filename().string().starts_with("job_"))
        if (auto record = ReadProcessFile(job.path() / "supervisor.pid");
            record && ProcessAlive(*record))
          supervisors.push_back(*record);
  }
  // A supervisor ends its job in KillWait at most, then runs the epilog (PrologEpilogTimeout).
  int64_t kill_wait = 30, epilog = 0;
  if (ConfigLoad load = LoadClusterConfig((state / "slurm.conf").string()); load.ok()) {
    kill_wait = load.config.settings.kill_wait_seconds;
    if (!load.config.settings.epilog.empty())
      epilog = load.config.settings.prolog_epilog_timeout_seconds;
  }
  stop(supervisors, std::chrono::seconds(std::clamp<int64_t>(kill_wait, 0, 3600) +
                                         std::clamp<int64_t>(epilog, 0, 3600) + 10));
  stop(agents, 10s);
  for (const Recorded& process : processes) fs::remove(state / "pids" / process.name, error);
  return stopped;
}

}  // namespace

namespace {

// The state directory for the cluster `conf` describes, made ready for a new start; an error
// (already said on stderr) when the configuration is wrong or a cluster runs from there.
std::optional<fs::path> PrepareState(const fs::path& conf, const std::string& state_option,
                                     ConfigLoad& load) {
  load = LoadClusterConfig(conf.string());
  if (!load.ok()) {
    for (const Diagnostic& error : load.diagnostics.errors())
      fmt::print(stderr, "drover up: error: {}\n", error.ToString());
    fmt::print(stderr, "drover up: fix {} (drover config check --conf {} shows everything)\n",
               conf.string(), conf.string());
    return std::nullopt;
  }
  fs::path state = state_option.empty() ? DefaultState(load.config.settings.cluster_name)
                                        : fs::absolute(state_option);
  for (const Recorded& process : Processes(state))
    if (process.alive) {
      fmt::print(stderr,
                 "drover up: a cluster is already running from {} ({} is PID {}); stop it with "
                 "`drover down --state {}` or choose another --state\n",
                 state.string(), process.name, process.record.pid, state.string());
      return std::nullopt;
    }
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(state, error))
    if (entry.path().extension() == ".port") fs::remove(entry.path(), error);
  error.clear();
  for (const char* sub : {"logs", "pids", "ctld", "spool", "run"})
    fs::create_directories(state / sub, error);
  if (error) {
    fmt::print(stderr, "drover up: cannot create {}: {}\n", state.string(), error.message());
    return std::nullopt;
  }
  // The cluster's key (kept across `drover down`/`up`), readable by its owner only; the broker's
  // socket in run/ is for every local user, so the directories above it can be searched.
  for (const char* key : {"slurm.key", "jwt_hs256.key"})
    if (!fs::exists(state / key))
      if (Status written = auth::WriteKey((state / key).string(), false); !written) {
        fmt::print(stderr, "drover up: {}\n", written.error());
        return std::nullopt;
      }
  for (const fs::path& dir : {state, state / "run"})
    fs::permissions(dir,
                    fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                        fs::perms::others_read | fs::perms::others_exec,
                    error);
  return state;
}

// The agent processes of an emulated cluster: one per node up to kOwnProcessNodes nodes (each
// node's log its own), else groups of kNodesPerAgent nodes in one process each, as Slurm's
// multiple-slurmd serves many nodes from one host.
constexpr size_t kOwnProcessNodes = 64;
constexpr size_t kNodesPerAgent = 1000;

struct AgentGroup {
  std::string name;      // its process's name in pids/ and logs/
  std::string hostlist;  // droverd -N
  std::vector<std::string> nodes;
};

// `one_each`: a process per node whatever the size (--nvml names one node's library).
std::vector<AgentGroup> AgentGroups(const ClusterConfig& cluster, bool one_each) {
  std::vector<AgentGroup> groups;
  const size_t size = one_each || cluster.nodes.size() <= kOwnProcessNodes ? 1 : kNodesPerAgent;
  for (size_t from = 0; from < cluster.nodes.size(); from += size) {
    AgentGroup group;
    for (size_t i = from; i < std::min(cluster.nodes.size(), from + size); ++i)
      group.nodes.push_back(cluster.nodes[i].name);
    group.hostlist = CompressHostlist(group.nodes);
    group.name = size == 1 ? group.nodes.front() : fmt::format("agent-{}", groups.size() + 1);
    groups.push_back(std::move(group));
  }
  return groups;
}

// droverctld (one per controller: the first leads, the others wait as standbys), then (once
// the first listens, so their first registration gets through) the agents (AgentGroups). The
// first controller's PID, or nullopt after saying why.
std::optional<pid_t> StartDaemons(const fs::path& state, const ClusterConfig& cluster,
                                  const std::vector<LocalController>& controllers,
                                  const std::string& nvml) {
  fs::path bin = BinDir();
  std::string slurm_conf = (state / "slurm.conf").string();
  const bool several = controllers.size() > 1;
  std::optional<pid_t> first;
  for (const LocalController& controller : controllers) {
    std::vector<std::string> argv = {
        (bin / "droverctld").string(),
        "--conf",
        slurm_conf,
        "--state",
        (state / "ctld").string(),
        "--listen",
        fmt::format("127.0.0.1:{}", controller.port),
        "--port-file",
        (state / (controller.process + ".port")).string(),
        "--http-listen",
        "127.0.0.1:0",
        "--http-port-file",
        (state / (controller.process == "ctld" ? std::string("http.port")
                                               : controller.process + ".http.port"))
            .string()};
    if (several) argv.insert(argv.end(), {"--name", controller.name});
    auto ctld = Spawn(state, controller.process, std::move(argv));
    if (!ctld) {
      fmt::print(stderr, "drover up: {}\n", ctld.error());
      StopAll(state);
      return std::nullopt;
    }
    if (!first) {
      first = *ctld;
      // The first leads: the others start once it does.
      for (int i = 0; i < 400 && !fs::exists(state / "ctld.port"); ++i) {
        if (!Processes(state).front().alive) break;
        std::this_thread::sleep_for(25ms);
      }
    }
  }
  auto ctld = first;
  // Each agent process's /metrics port goes to metrics/<group>.port (Prometheus' targets).
  std::error_code made;
  fs::create_directories(state / "metrics", made);
  for (const AgentGroup& group : AgentGroups(cluster, !nvml.empty())) {
    std::vector<std::string> argv = {(bin / "droverd").string(),
                                     "-N",
                                     group.hostlist,
                                     "--conf",
                                     slurm_conf,
                                     "--emulate",
                                     "--listen",
                                     "127.0.0.1:0",
                                     "--metrics-listen",
                                     "127.0.0.1:0",
                                     "--metrics-port-file",
                                     (state / "metrics" / (group.name + ".port")).string()};
    // With several controllers the agents go by slurm.conf's lines, to whichever leads.
    if (!several)
      argv.insert(argv.end(), {"--controller", fmt::format("127.0.0.1:{}", controllers[0].port)});
    if (!nvml.empty()) argv.insert(argv.end(), {"--nvml", nvml});
    auto agent = Spawn(state, group.name, std::move(argv));
    if (!agent) {
      fmt::print(stderr, "drover up: {}\n", agent.error());
      StopAll(state);
      return std::nullopt;
    }
  }
  return *ctld;
}

// Waits up to 60 s for every node to be IDLE; otherwise prints the logs' ends, stops the
// cluster and returns false.
bool WaitUntilIdle(const fs::path& state, const ClusterConfig& cluster, bool one_each) {
  auto deadline = std::chrono::steady_clock::now() + 60s;
  std::map<std::string, std::string> states;
  while (true) {
    states = NodeStates(cluster);
    size_t idle = 0;
    for (const auto& [name, node_state] : states) idle += node_state == "IDLE";
    if (idle == cluster.nodes.size()) return true;
    bool dead = false;
    for (const Recorded& process : Processes(state)) dead = dead || !process.alive;
    if (dead || std::chrono::steady_clock::now() > deadline) {
      fmt::print(stderr, "drover up: the cluster did not come up{}; its logs end:\n",
                 dead ? " (a daemon stopped)" : " within 60 s");
      PrintLogTail(state / "logs" / "ctld.log");
      for (const AgentGroup& group : AgentGroups(cluster, one_each))
        if (std::any_of(group.nodes.begin(), group.nodes.end(),
                        [&](const std::string& node) { return states[node] != "IDLE"; }))
          PrintLogTail(state / "logs" / (group.name + ".log"));
      StopAll(state);
      return false;
    }
    std::this_thread::sleep_for(50ms);
  }
}

void PrintUp(const fs::path& state, const ClusterConfig& cluster,
             const std::vector<LocalController>& controllers, pid_t ctld) {
  const int port = controllers.front().port;
  int gpus = 0, cpus = 0;
  for (const NodeConfig& node : cluster.nodes) {
    gpus += static_cast<int>(node.gpus.size());
    cpus += node.cpus;
  }
  fmt::print(
      "Cluster {} is up: {} nodes ({} CPUs, {} GPUs, emulated), every node IDLE.\n"
      "  controller  127.0.0.1:{} (PID {}){}\n"
      "  dashboard   {}\n"
      "  state       {}\n"
      "  logs        {}\n\n"
      "To use it from this shell:\n",
      cluster.settings.cluster_name, cluster.nodes.size(), cpus, gpus, port, ctld,
      [&] {
        std::string backups;
        for (size_t i = 1; i < controllers.size(); ++i)
          backups += fmt::format("{}127.0.0.1:{} ({})", i == 1 ? ", backups " : ", ",
                                 controllers[i].port, controllers[i].name);
        return backups;
      }(),
      [&] {
        std::ifstream file(state / "http.port");
        int http = 0;
        if (!(file >> http) || http <= 0) return std::string("(no HTTP port)");
        return fmt::format("http://127.0.0.1:{}/ui/ (sign in with a token: scontrol token)", http);
      }(),
      state.string(), (state / "logs").string());
  PrintEnv(state);
  fmt::print("\nStop it with: drover down --state {}\n", state.string());
}

}  // namespace

int RunUp(Arguments args) {
  auto options = Parse(args, "up", true);
  if (!options) return 2;
  if (options->help) {
    fmt::print(
        "Usage: drover up [--conf slurm.conf] [--state DIR] [--nvml LIB]\n"
        "Starts droverctld and emulated droverds for the nodes of the configuration (default:\n"
        "{}) on this machine, on free loopback ports, and waits until every node is IDLE:\n"
        "one droverd per node up to 64 nodes, else one per 1,000 nodes.\n"
        "State, logs and the effective configuration go to DIR (default:\n"
        "$XDG_STATE_HOME/drover/CLUSTER). Stop it with `drover down`.\n"
        "--nvml LIB: the nodes' GPUs are what that NVML library finds (libnvidia-ml.so.1: this\n"
        "machine's real GPUs, shared by every node; meant for a one-node cluster).\n"
        "Several SlurmctldHost lines (StorageType=postgresql): one droverctld per line, each on\n"
        "its own loopback port; the first leads, the others wait as standbys.\n",
        DefaultConf().string());
    return 0;
  }
  fs::path conf = options->conf.empty() ? DefaultConf() : fs::path(options->conf);
  ConfigLoad load;
  std::optional<fs::path> state = PrepareState(conf, options->state, load);
  if (!state) return 1;
  const ClusterSettings& settings = load.config.settings;
  if (settings.controller_hosts.size() > 1 && settings.storage.kind != StorageKind::kPostgres) {
    fmt::print(stderr,
               "drover up: {} names {} SlurmctldHost lines: several controllers share a "
               "PostgreSQL database (StorageType=postgresql and its Storage* keys, "
               "docs/configuration.md); with SQLite keep one line\n",
               conf.string(), settings.controller_hosts.size());
    return 1;
  }
  const std::vector<LocalController> controllers = Controllers(settings);
  if (Status written = WriteEffectiveConfig(conf, *state, controllers); !written) {
    fmt::print(stderr, "drover up: {}\n", written.error());
    return 1;
  }
  std::error_code error;
  fs::create_directories(DefaultState(""), error);
  std::ofstream(DefaultState("") / "last") << state->string() << "\n";
  ConfigLoad effective = LoadClusterConfig((*state / "slurm.conf").string());
  if (!effective.ok()) {
    for (const Diagnostic& problem : effective.diagnostics.errors())
      fmt::print(stderr, "drover up: error: {}\n", problem.ToString());
    return 1;
  }
  const ClusterConfig& cluster = effective.config;
  std::optional<pid_t> ctld = StartDaemons(*state, cluster, controllers, options->nvml);
  if (!ctld) return 1;
  if (!WaitUntilIdle(*state, cluster, !options->nvml.empty())) return 1;
  PrintUp(*state, cluster, controllers, *ctld);
  return 0;
}

int RunDown(Arguments args) {
  auto options = Parse(args, "down", false);
  if (!options) return 2;
  if (options->help) {
    fmt::print("Usage: drover down [--state DIR]\nStops the cluster `drover up` started there.\n");
    return 0;
  }
  fs::path state = StateDir(*options);
  std::vector<Recorded> processes = Processes(state);
  if (processes.empty()) {
    fmt::print(stderr, "drover down: no cluster was started from {}\n", state.string());
    return 1;
  }
  int stopped = StopAll(state);
  fmt::print("Stopped {} processes of the cluster in {}.\n", stopped, state.string());
  return 0;
}

int RunStatus(Arguments args) {
  auto options = Parse(args, "status", false);
  if (!options) return 2;
  if (options->help) {
    fmt::print("Usage: drover status [--state DIR]\nShows the daemons `drover up` started.\n");
    return 0;
  }
  fs::path state = StateDir(*options);
  std::vector<Recorded> processes = Processes(state);
  if (processes.empty()) {
    fmt::print(stderr, "drover status: no cluster was started from {}\n", state.string());
    return 1;
  }
  std::map<std::string, std::string> states;
  ConfigLoad load = LoadClusterConfig((state / "slurm.conf").string());
  if (load.ok()) states = NodeStates(load.config);
  fmt::print("{:<12} {:>8}  {:<8} {}\n", "PROCESS", "PID", "RUNNING", "NODE STATE");
  int running = 0;
  for (const Recorded& process : processes) {
    running += process.alive;
    fmt::print("{:<12} {:>8}  {:<8} {}\n",
               process.name == "ctld"       ? "droverctld"
               : IsController(process.name) ? "droverctld" + process.name.substr(4)
                                            : process.name,
               process.record.pid, process.alive ? "yes" : "no",
               IsController(process.name) ? "" : states[process.name]);
  }
  fmt::print("state in {}\n", state.string());
  return running == static_cast<int>(processes.size()) ? 0 : 1;
}

int RunEnv(Arguments args) {
  auto options = Parse(args, "env", false);
  if (!options) return 2;
  if (options->help) {
    fmt::print(
        "Usage: drover env [--state DIR]\nPrints the shell lines that point the commands at "
        "the cluster: eval \"$(drover env)\"\n");
    return 0;
  }
  fs::path state = StateDir(*options);
  if (!fs::exists(state / "slurm.conf")) {
    fmt::print(stderr, "drover env: no cluster was started from {}; run drover up first\n",
               state.string());
    return 1;
  }
  PrintEnv(state);
  return 0;
}

}  // namespace drover::cli
