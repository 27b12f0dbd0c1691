// submit_throughput: droverctld as a separate process with durable SQLite state (or, with
// --postgres, in a PostgreSQL server started here, as the tests start theirs), driven over gRPC
// on loopback. Measures acknowledged Submit RPCs per second and their latency from N clients,
// the latency of a full ListJobs while the queue is large and submissions continue, and the
// controller's resident memory per queued job. No agent registers, so every job stays pending.
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "auth/auth.h"
#include "auth/grpc_auth.h"
#include "common/cluster_config.h"
#include "common/getopt.h"
#include "proto/drover.grpc.pb.h"
#include "testing/postgres_server.h"
#include "wire/job_pages.h"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using Stub = drover::v1::Controller::Stub;

struct Options {
  int clients = 8;
  int jobs = 20000;
  int queue = 100000;
  std::string droverctld = DROVERCTLD_PATH;
  bool postgres = false;
};

constexpr const char* kUsage =
    "Usage: submit_throughput [--clients N] [--jobs N] [--queue N] [--droverctld PATH] "
    "[--postgres]\n";

constexpr drover::OptionSpec kOptionSpecs[] = {
    {0, "clients", drover::OptionSpec::kRequired}, {0, "jobs", drover::OptionSpec::kRequired},
    {0, "queue", drover::OptionSpec::kRequired},   {0, "droverctld", drover::OptionSpec::kRequired},
    {0, "postgres", drover::OptionSpec::kNone},
};

bool ReadOptions(int argc, char** argv, Options& options) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = drover::ParseOptions(args, kOptionSpecs);
  if (!parsed || !parsed->operands.empty()) return false;
  auto number = [&](const char* name, int& out) {
    if (auto value = parsed->Last(name)) out = std::atoi(value->c_str());
  };
  number("clients", options.clients);
  number("jobs", options.jobs);
  number("queue", options.queue);
  options.droverctld = parsed->Last("droverctld").value_or(options.droverctld);
  options.postgres = parsed->Has("postgres");
  return options.clients >= 2 && options.jobs > 0 && options.queue >= 0;
}

// What Fail cleans up: the controller's PID once started, and the temporary directory.
std::atomic<pid_t> controller_pid{0};
fs::path temp_dir;

// Stops the controller, removes the temporary directory and exits, from any thread.
[[noreturn]] void Fail(const std::string& message) {
  static std::mutex once;  // the first caller cleans up and exits; later ones wait for that
  once.lock();
  std::fprintf(stderr, "submit_throughput: error: %s\n", message.c_str());
  if (pid_t pid = controller_pid.exchange(0); pid > 0) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid)
      std::fprintf(stderr, "droverctld had stopped: %s %d\n",
                   WIFSIGNALED(status) ? "signal" : "exit status",
                   WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    else if (::kill(pid, SIGKILL) == 0)
      waitpid(pid, nullptr, 0);
  }
  if (!temp_dir.empty()) {
    std::ifstream log(temp_dir / "ctld.log");
    for (std::string line; std::getline(log, line);)
      std::fprintf(stderr, "  droverctld: %s\n", line.c_str());
    std::error_code ignored;
    fs::remove_all(temp_dir, ignored);
  }
  std::_Exit(1);
}

fs::path MakeTempDir() {
  std::string pattern = (fs::temp_directory_path() / "drover_submit_XXXXXX").string();
  if (!mkdtemp(pattern.data())) Fail("cannot create a temporary directory");
  fs::path dir = pattern;
  temp_dir = dir;
  std::ofstream(dir / "slurm.conf")
      << "ClusterName=bench\nGresTypes=gpu\nMaxJobCount=1000000\nDefMemPerCPU=100\n"
         "NodeName=n[1-4] CPUs=64 RealMemory=256000 Gres=gpu:8\n"
         "PartitionName=batch Nodes=ALL Default=YES MaxTime=1-00:00:00\n"
      << "AuthType=auth/slurm\nAuthInfo=key=" << (dir / "slurm.key").string() << "\n";
  if (drover::Status written = drover::auth::WriteKey((dir / "slurm.key").string(), false);
      !written)
    Fail(written.error());
  return dir;
}

// One droverctld process on 127.0.0.1 with a port chosen at run time; stopped by PID.
class Controller {
 public:
  Controller(const fs::path& dir, const std::string& binary) : dir_(dir) { Start(binary); }
  ~Controller() { Stop(); }

  int port() const { return port_; }
  pid_t pid() const { return pid_; }

  void Stop() {
    if (pid_ <= 0 || controller_pid.exchange(0) != pid_) return;
    ::kill(pid_, SIGTERM);
    auto deadline = Clock::now() + 5s;
    int status = 0;
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (Clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(20ms);
    }
    pid_ = 0;
  }

 private:
  void Start(const std::string& binary) {
    pid_ = fork();
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // should this program die without stopping it
      FILE* log = std::fopen((dir_ / "ctld.log").c_str(), "a");
      if (log) dup2(fileno(log), 2);
      execl(binary.c_str(), "droverctld", "--conf", (dir_ / "slurm.conf").c_str(), "--state",
            (dir_ / "state").c_str(), "--listen", "127.0.0.1:0", "--port-file",
            (dir_ / "port").c_str(), "--http-listen", "127.0.0.1:0", nullptr);
      _exit(127);
    }
    controller_pid = pid_;
    for (int i = 0; i < 400 && port_ == 0; ++i) {
      std::this_thread::sleep_for(25ms);
      std::ifstream(dir_ / "port") >> port_;
    }
    if (port_ == 0) Fail("droverctld (" + binary + ") did not start");
  }

  fs::path dir_;
  pid_t pid_ = 0;
  int port_ = 0;
};

// VmRSS of a process in bytes, 0 when it cannot be read.
uint64_t ResidentBytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10) * 1024;
  return 0;
}

// Each stub gets its own channel and its own TCP connection (a distinct channel argument and a
// local subchannel pool), so clients do not share one HTTP/2 connection.
// Every call carries a fresh credential, as the commands' do (auth/slurm, signed with the key).
std::unique_ptr<Stub> MakeStub(const fs::path& dir, int port, int index) {
  static drover::ClusterConfig cluster =
      drover::LoadClusterConfig((dir / "slurm.conf").string()).config;
  static std::unique_ptr<drover::auth::Authenticator> authenticator = [] {
    auto settings = drover::auth::SettingsOf(cluster);
    if (!settings) Fail(settings.error());
    auto created = drover::auth::Create(*settings, drover::auth::Role::kClient);
    if (!created) Fail(created.error());
    return std::move(*created);
  }();
  grpc::ChannelArguments args;
  args.SetInt("bench.channel", index);
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetMaxReceiveMessageSize(-1);  // a full job list is far above the 4 MiB default
  auto channel =
      drover::auth::NewChannel("127.0.0.1:" + std::to_string(port), cluster, args, *authenticator);
  if (!channel) Fail(channel.error());
  return drover::v1::Controller::NewStub(*channel);
}

void WaitReady(Stub& stub) {
  grpc::ClientContext context;
  context.set_wait_for_ready(true);
  context.set_deadline(std::chrono::system_clock::now() + 10s);
  drover::v1::PingReply reply;
  grpc::Status status = stub.Ping(&context, drover::v1::PingRequest(), &reply);
  if (!status.ok()) Fail("Ping: " + status.error_message());
}

// What `sbatch --wrap=true` sends: one task, one CPU, ten minutes.
const drover::v1::SubmitRequest& SmallBatchJob() {
  static const drover::v1::SubmitRequest request = [] {
    drover::v1::SubmitRequest r;
    drover::v1::JobSpec* spec = r.mutable_spec();
    spec->set_name("wrap");
    spec->set_user("alice");
    spec->set_account("research");
    spec->set_min_nodes(1);
    spec->set_max_nodes(1);
    spec->set_ntasks(1);
    spec->set_cpus_per_task(1);
    spec->set_time_limit_seconds(600);
    spec->set_array_task_id(UINT32_MAX);
    spec->set_work_dir("/tmp");
    r.set_script("#!/bin/sh\ntrue\n");
    return r;
  }();
  return request;
}

// One Submit; its latency in seconds, or a negative value when it was not acknowledged.
double SubmitOne(Stub& stub, std::atomic<int>& errors) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 30s);
  drover::v1::SubmitReply reply;
  auto start = Clock::now();
  grpc::Status status = stub.Submit(&context, SmallBatchJob(), &reply);
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (status.ok() && reply.job_id() > 0) return seconds;
  if (errors++ == 0) std::fprintf(stderr, "Submit failed: %s\n", status.error_message().c_str());
  if (errors > 100) Fail("too many failed submissions");
  return -1;
}

struct Load {
  double seconds = 0;
  std::vector<double> latencies;
};

// Every client submits until `count` jobs are acknowledged in total.
Load SubmitMany(std::vector<std::unique_ptr<Stub>>& stubs, int count, std::atomic<int>& errors) {
  std::atomic<int> next{0};
  std::vector<std::vector<double>> latencies(stubs.size());
  std::vector<std::thread> threads;
  auto start = Clock::now();
  for (size_t c = 0; c < stubs.size(); ++c) {
    threads.emplace_back([&, c] {
      while (next++ < count) {
        double seconds;
        while ((seconds = SubmitOne(*stubs[c], errors)) < 0) {
        }
        latencies[c].push_back(seconds);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  Load load;
  load.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (auto& part : latencies)
    load.latencies.insert(load.latencies.end(), part.begin(), part.end());
  std::sort(load.latencies.begin(), load.latencies.end());
  return load;
}

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  return sorted[static_cast<size_t>(p * static_cast<double>(sorted.size() - 1))];
}

// Clients that keep submitting until stopped; they count what was acknowledged.
class Background {
 public:
  Background(std::vector<Stub*> stubs, std::atomic<int>& errors) {
    for (Stub* stub : stubs)
      threads_.emplace_back([this, stub, &errors] {
        while (!stop_)
          if (SubmitOne(*stub, errors) >= 0) ++acknowledged_;
      });
  }
  int Stop() {
    stop_ = true;
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
    return acknowledged_;
  }
  ~Background() { Stop(); }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> acknowledged_{0};
  std::vector<std::thread> threads_;
};

// One ListJobs of every job, parsed as squeue would: its latency in seconds, the jobs returned
// and the reply size.
double ListAll(Stub& stub, int* count, size_t* bytes) {
  drover::v1::JobQuery query;
  query.set_all_states(true);
  drover::v1::JobList list;
  auto start = Clock::now();
  grpc::Status status = drover::wire::ListJobPages(stub, query, &list, 300);
  if (!status.ok()) Fail("ListJobs: " + status.error_message());
  drover::v1::Job job;
  for (const std::string& encoded : list.jobs())
    if (!job.ParseFromString(encoded)) Fail("ListJobs: a job record cannot be parsed");
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  *count = list.jobs_size();
  *bytes = list.ByteSizeLong();
  return seconds;
}

uint64_t JobsInController(Stub& stub) {
  grpc::ClientContext context;
  drover::v1::PingReply reply;
  if (!stub.Ping(&context, drover::v1::PingRequest(), &reply).ok()) return 0;
  return reply.jobs();
}

void ReportThroughput(const Options& options, const Load& load) {
  std::printf(
      "submit_throughput: %d clients, %d jobs: %.0f acknowledged/s, latency p50 %.1f ms "
      "p99 %.1f ms\n",
      options.clients, options.jobs, static_cast<double>(load.latencies.size()) / load.seconds,
      Percentile(load.latencies, 0.50) * 1e3, Percentile(load.latencies, 0.99) * 1e3);
}

struct Query {
  std::vector<double> seconds;
  int listed = 0;
  size_t bytes = 0;
  int submitted = 0;  // acknowledged by the background clients meanwhile
};

Query MeasureQueries(std::vector<std::unique_ptr<Stub>>& stubs, Stub& reader,
                     std::atomic<int>& errors) {
  Query query;
  Background background({stubs[0].get(), stubs[1].get()}, errors);
  for (int i = 0; i < 5; ++i) query.seconds.push_back(ListAll(reader, &query.listed, &query.bytes));
  query.submitted = background.Stop();
  std::sort(query.seconds.begin(), query.seconds.end());
  return query;
}

void ReportQueries(const Query& query) {
  std::printf(
      "query: %d jobs listed in %.2f s (min %.2f, max %.2f) while 2 clients submit "
      "(%d more acknowledged meanwhile; reply %.1f MiB)\n",
      query.listed, query.seconds[2], query.seconds.front(), query.seconds.back(), query.submitted,
      static_cast<double>(query.bytes) / (1 << 20));
}

void ReportMemory(uint64_t start, uint64_t before_queries, uint64_t end, uint64_t jobs) {
  double per_job =
      jobs ? (static_cast<double>(end) - static_cast<double>(start)) / static_cast<double>(jobs)
           : 0;
  std::printf(
      "memory: %.0f MiB RSS at %llu queued jobs, %.0f bytes per job (%.0f MiB empty, "
      "%.0f MiB before the queries)\n",
      static_cast<double>(end) / (1 << 20), static_cast<unsigned long long>(jobs), per_job,
      static_cast<double>(start) / (1 << 20), static_cast<double>(before_queries) / (1 << 20));
}

void Run(const Options& options, const Controller& ctld) {
  std::vector<std::unique_ptr<Stub>> stubs;
  for (int c = 0; c < options.clients; ++c) stubs.push_back(MakeStub(temp_dir, ctld.port(), c));
  auto reader = MakeStub(temp_dir, ctld.port(), options.clients);
  for (auto& stub : stubs) WaitReady(*stub);
  WaitReady(*reader);
  uint64_t rss_start = ResidentBytes(ctld.pid());
  std::atomic<int> errors{0};

  Load load = SubmitMany(stubs, options.jobs, errors);
  ReportThroughput(options, load);

  int fill = std::max(0, options.queue - options.jobs);
  Load filled = SubmitMany(stubs, fill, errors);
  std::printf("fill: %d more jobs in %.1f s (%.0f/s)\n", fill, filled.seconds,
              fill ? fill / filled.seconds : 0.0);
  uint64_t rss_before_queries = ResidentBytes(ctld.pid());
  Query query = MeasureQueries(stubs, *reader, errors);
  ReportQueries(query);

  uint64_t queued = JobsInController(*reader);
  ReportMemory(rss_start, rss_before_queries, ResidentBytes(ctld.pid()), queued);
  if (errors > 0) std::printf("errors: %d submissions failed and were retried\n", errors.load());
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ReadOptions(argc, argv, options)) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each figure as soon as it is measured
  fs::path dir = MakeTempDir();
  std::unique_ptr<drover::testing::PostgresServer> postgres;
  if (options.postgres) {
    auto started = drover::testing::PostgresServer::Start();
    if (!started) Fail("PostgreSQL: " + started.error());
    postgres = std::move(*started);
    std::ofstream(dir / "slurm.conf", std::ios::app)
        << "StorageType=postgresql\nStorageHost=127.0.0.1\nStoragePort=" << postgres->port()
        << "\nStorageUser=drover\nStorageLoc=drover\n";
  }
  std::printf("droverctld %s, state in %s; 4 nodes, no agents: every job stays PENDING\n",
              options.droverctld.c_str(),
              postgres
                  ? fmt::format("PostgreSQL on 127.0.0.1:{} (synchronous_commit=on, same host)",
                                postgres->port())
                        .c_str()
                  : fmt::format("{} (SQLite, synchronous=FULL)", dir.string()).c_str());
  {
    Controller ctld(dir, options.droverctld);
    Run(options, ctld);
  }
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  return 0;
}
