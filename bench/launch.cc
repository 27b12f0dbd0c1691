// launch: an idle emulated cluster (droverctld and four emulated droverd agents from this build,
// loopback, temporary state). Measures the latency from submission to the job's first
// instruction — the script's first line creates a file; its timestamp is the start — median
// and p99 over sequential jobs; and the throughput of jobs of `true` from the first submission
// to the last completion, with the processes created and the CPU used per job (the machine's
// counters in /proc/stat, so anything else running on it counts too).
//   build/bin/launch [--latency-jobs N] [--jobs N] [--gpu | --constrain-devices]
// --gpu: each job gets one GPU, with TaskPlugin=task/cgroup; --constrain-devices (root): the
// same with ConstrainDevices=yes, the GPUs being character devices this run makes with mknod
// (gres.conf File=), so the two runs' difference is what device isolation adds to a launch.
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/getopt.h"
#include "proto/drover.grpc.pb.h"
#include "testing/local_cluster.h"
#include "wire/job_pages.h"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using drover::testing::LocalCluster;

constexpr const char* kConf =
    "ClusterName=bench\nGresTypes=gpu\nSlurmdTimeout=60\nKillWait=5\nMinJobAge=3600\n"
    "MaxJobCount=100000\nSchedulerParameters=sched_min_interval=0\n"
    "NodeName=node[1-4] NodeAddr=127.0.0.1 CPUs=16 RealMemory=64000 Gres=gpu:8\n"
    "PartitionName=gpu Nodes=ALL Default=YES MaxTime=1:00:00\n";

uint32_t job_gpus = 0;  // --gpu, --constrain-devices: one per job

// --constrain-devices: eight character devices per node (major 240, for local use: nothing
// opens them) as the nodes' GPUs in gres.conf, and ConstrainDevices=yes in cgroup.conf.
bool MakeDevices(const fs::path& dir, bool constrain) {
  std::string gres;
  if (constrain) {
    fs::create_directories(dir / "dev");
    for (int node = 1; node <= 4; ++node) {
      for (int gpu = 0; gpu < 8; ++gpu) {
        fs::path file = dir / "dev" / ("n" + std::to_string(node) + "gpu" + std::to_string(gpu));
        if (mknod(file.c_str(), S_IFCHR | 0666, makedev(240, node * 8 + gpu)) != 0) {
          std::perror(("launch: mknod " + file.string()).c_str());
          return false;
        }
      }
      gres += "NodeName=node" + std::to_string(node) + " Name=gpu File=" + (dir / "dev").string() +
              "/n" + std::to_string(node) + "gpu[0-7]\n";
    }
    std::FILE* out = std::fopen((dir / "gres.conf").c_str(), "w");
    if (!out) return false;
    std::fputs(gres.c_str(), out);
    std::fclose(out);
  }
  std::FILE* out = std::fopen((dir / "cgroup.conf").c_str(), "w");
  if (!out) return false;
  std::fputs(constrain ? "ConstrainDevices=yes\n" : "ConstrainDevices=no\n", out);
  std::fclose(out);
  return true;
}

drover::v1::SubmitRequest Request(const fs::path& dir, const std::string& script) {
  drover::v1::SubmitRequest request;
  request.mutable_caller()->set_uid(getuid());
  request.mutable_caller()->set_gid(getgid());
  drover::v1::JobSpec* spec = request.mutable_spec();
  spec->set_name("bench");
  spec->set_user("bench");
  spec->set_account("bench");
  spec->set_min_nodes(1);
  spec->set_ntasks(1);
  spec->set_cpus_per_task(1);
  spec->set_gpus_per_node(job_gpus);
  spec->set_mem_per_node_mb(100);
  spec->set_array_task_id(UINT32_MAX);
  spec->set_time_limit_seconds(600);
  spec->set_work_dir(dir.string());
  spec->set_stdout_path("/dev/null");
  request.set_script(script);
  return request;
}

double Seconds(const timespec& t) {
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

double Now() {
  timespec t{};
  clock_gettime(CLOCK_REALTIME, &t);
  return Seconds(t);
}

double Percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  size_t index = std::min(values.size() - 1, static_cast<size_t>(p * (values.size() - 1) + 0.5));
  return values[index];
}

// Latency: one job at a time on the idle cluster; seconds from submission to each job's first
// instruction (the mtime of the file its script's first line creates).
std::optional<std::vector<double>> MeasureLatency(LocalCluster& cluster, int jobs) {
  fs::path marks = cluster.dir() / "marks";
  fs::create_directories(marks);
  std::vector<double> latency;
  for (int i = 0; i < jobs; ++i) {
    fs::path mark = marks / std::to_string(i);
    auto request = Request(cluster.dir(), "#!/bin/sh\n: > " + mark.string() + "\n");
    grpc::ClientContext context;
    drover::v1::SubmitReply reply;
    double submitted = Now();
    if (!cluster.stub().Submit(&context, request, &reply).ok()) {
      std::fprintf(stderr, "launch: submission failed\n");
      return std::nullopt;
    }
    struct stat info {};
    if (!LocalCluster::WaitFor([&] { return stat(mark.c_str(), &info) == 0; }, 30s)) {
      std::fprintf(stderr, "launch: job %llu did not start within 30 s\n%s",
                   static_cast<unsigned long long>(reply.job_id()), cluster.Logs().c_str());
      return std::nullopt;
    }
    latency.push_back(Seconds(info.st_mtim) - submitted);
  }
  return latency;
}

// Jobs from `first` on that have COMPLETED (the latency phase's jobs are not counted).
int CompletedSince(LocalCluster& cluster, uint64_t first) {
  drover::v1::JobQuery query;
  query.mutable_filter()->set_state("COMPLETED");
  query.set_after(first ? first - 1 : 0);  // the listing starts at `first`
  drover::v1::JobList list;
  if (!drover::wire::ListJobPages(cluster.stub(), query, &list, 60).ok()) return 0;
  int completed = 0;
  drover::v1::Job job;
  for (const std::string& encoded : list.jobs())
    if (job.ParseFromString(encoded) && job.spec().job_id() >= first) ++completed;
  return completed;
}

// The machine's counters from /proc/stat: processes created since boot ("processes", every
// fork and clone of a process) and CPU time busy (user, nice, system, irq, softirq, steal).
struct MachineCounters {
  uint64_t forks = 0;
  double busy_seconds = 0;
};
MachineCounters ReadMachineCounters() {
  MachineCounters counters;
  std::ifstream in("/proc/stat");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string key;
    words >> key;
    if (key == "processes") {
      words >> counters.forks;
    } else if (key == "cpu") {
      uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
               steal = 0;
      words >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
      counters.busy_seconds = static_cast<double>(user + nice + system + irq + softirq + steal) /
                              static_cast<double>(::sysconf(_SC_CLK_TCK));
    }
  }
  return counters;
}

struct Throughput {
  double seconds = 0;
  MachineCounters used;  // the machine's, from the first submission to the last completion
};

// Throughput: every job submitted at once (in requests of 100); seconds to the last completion.
std::optional<Throughput> MeasureThroughput(LocalCluster& cluster, int jobs) {
  const MachineCounters before = ReadMachineCounters();
  auto started = std::chrono::steady_clock::now();
  uint64_t first = 0;
  for (int sent = 0; sent < jobs;) {
    drover::v1::SubmitManyRequest many;
    for (int k = 0; k < 100 && sent < jobs; ++k, ++sent)
      *many.add_jobs() = Request(cluster.dir(), "#!/bin/sh\ntrue\n");
    grpc::ClientContext context;
    drover::v1::SubmitManyReply reply;
    if (!cluster.stub().SubmitMany(&context, many, &reply).ok()) {
      std::fprintf(stderr, "launch: submission failed\n");
      return std::nullopt;
    }
    if (!first) first = reply.results(0).job_id();
  }
  int completed = 0;
  bool done = LocalCluster::WaitFor(
      [&] { return (completed = CompletedSince(cluster, first)) >= jobs; }, 600s);
  if (!done) {
    std::fprintf(stderr, "launch: only %d of %d jobs completed within 600 s\n", completed, jobs);
    // The others, with their state and reason, so that a run that fails says why.
    drover::v1::JobQuery query;
    query.set_all_states(true);
    query.set_after(first ? first - 1 : 0);  // the listing starts at `first`
    drover::v1::JobList list;
    if (drover::wire::ListJobPages(cluster.stub(), query, &list, 60).ok()) {
      drover::v1::Job job;
      for (const std::string& encoded : list.jobs())
        if (job.ParseFromString(encoded) && job.spec().job_id() >= first &&
            job.state() != "COMPLETED")
          std::fprintf(stderr, "launch: job %llu is %s: %s\n",
                       static_cast<unsigned long long>(job.spec().job_id()), job.state().c_str(),
                       job.reason().c_str());
    }
    return std::nullopt;
  }
  Throughput measured;
  measured.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const MachineCounters after = ReadMachineCounters();
  measured.used.forks = after.forks - before.forks;
  measured.used.busy_seconds = after.busy_seconds - before.busy_seconds;
  return measured;
}

constexpr drover::OptionSpec kOptions[] = {
    {0, "latency-jobs", drover::OptionSpec::kRequired},
    {0, "jobs", drover::OptionSpec::kRequired},
    {0, "gpu", drover::OptionSpec::kNone},
    {0, "constrain-devices", drover::OptionSpec::kNone},
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = drover::ParseOptions(args, kOptions);
  if (!parsed || !parsed->operands.empty()) {
    std::fprintf(stderr,
                 "Usage: launch [--latency-jobs N] [--jobs N] [--gpu | --constrain-devices]\n");
    return 2;
  }
  bool constrain = parsed->Has("constrain-devices");
  bool gpu = constrain || parsed->Has("gpu");
  if (constrain && geteuid() != 0) {
    std::fprintf(stderr, "launch: --constrain-devices needs root (mknod, device cgroups)\n");
    return 2;
  }
  int latency_jobs = std::atoi(parsed->Last("latency-jobs").value_or("200").c_str());
  int throughput_jobs = std::atoi(parsed->Last("jobs").value_or("2000").c_str());
  std::string conf = kConf;
  if (gpu) {
    job_gpus = 1;
    conf = "TaskPlugin=task/cgroup\n" + conf;
  }
  LocalCluster cluster({DROVERCTLD_PATH, DROVERD_PATH}, conf, {"node1", "node2", "node3", "node4"});
  if (gpu && !MakeDevices(cluster.dir(), constrain)) return 1;
  if (!cluster.Boot()) {
    std::fprintf(stderr, "launch: %s\n%s", cluster.error().c_str(), cluster.Logs().c_str());
    return 1;
  }
  std::optional<std::vector<double>> latency = MeasureLatency(cluster, latency_jobs);
  if (!latency) return 1;
  std::optional<Throughput> throughput = MeasureThroughput(cluster, throughput_jobs);
  if (!throughput) return 1;
  std::printf(
      "launch latency (submission to first instruction, %d jobs one at a time%s): median "
      "%.1f ms, p99 %.1f ms\n",
      latency_jobs,
      constrain ? ", one GPU each, ConstrainDevices=yes"
      : gpu     ? ", one GPU each, ConstrainDevices=no"
                : "",
      Percentile(*latency, 0.5) * 1000, Percentile(*latency, 0.99) * 1000);
  std::printf(
      "throughput: %d jobs of `true` from first submission to last completion in %.2f s: "
      "%.0f jobs/s\n",
      throughput_jobs, throughput->seconds, throughput_jobs / throughput->seconds);
  // Machine-wide (anything else running counts too): what a job cost the node and the controller.
  std::printf("per job (whole machine): %.1f processes created, %.1f ms of CPU\n",
              static_cast<double>(throughput->used.forks) / throughput_jobs,
              throughput->used.busy_seconds * 1000 / throughput_jobs);
  return 0;
}
