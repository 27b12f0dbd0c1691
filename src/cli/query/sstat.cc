// sstat: what the running steps of a job use now. The controller names the job's nodes and
// where their agents answer; each agent sums its steps' processes from /proc (StepUsage, as
// slurmd answers REQUEST_JOB_STEP_STAT); sstat combines the nodes as Slurm's does (the largest
// node, the mean a task, the totals).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "auth/grpc_auth.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "cli/query/query_common.h"
#include "common/agent_address.h"
#include "common/getopt.h"
#include "common/hostlist.h"
#include "common/text.h"

namespace drover::cli {
namespace {

constexpr const char* kSstatUsage =
    "Usage: sstat [options] -j <job(.stepid)>\n"
    "\tUse --help for help\n";

constexpr const char* kSstatHelp =
    "sstat [<OPTION>] -j <job(.stepid)>\n"
    "    Valid <OPTION> values are:\n"
    "      -a, --allsteps:\n"
    "                   Print all steps for the given job(s) when no step is\n"
    "                   specified.\n"
    "      -e, --helpformat:\n"
    "                   Print a list of fields that can be specified with the\n"
    "                   '--format' option\n"
    "     -h, --help:   Print this description of use.\n"
    "     -i, --pidformat:\n"
    "                   Predefined format to list the pids running for each\n"
    "                   job step.  (JobId,Nodes,Pids)\n"
    "     -j, --jobs:\n"
    "                   Format is <job(.step)>. Stat this job step\n"
    "                   or comma-separated list of job steps. This option is\n"
    "                   required.\n"
    "     -n, --noheader:\n"
    "                   No header will be added to the beginning of output.\n"
    "     --noconvert:  Don't convert units from their original type\n"
    "                   (e.g. 2048M won't be converted to 2G).\n"
    "     -o, --format:\n"
    "                   Comma separated list of fields.\n"
    "                   (use \"--helpformat\" for a list of available fields).\n"
    "     -p, --parsable: output will be '|' delimited with a '|' at the end\n"
    "     -P, --parsable2: output will be '|' delimited without a '|' at the end\n"
    "     --usage:      Display brief usage message.\n"
    "     -v, --verbose:\n"
    "                   Primarily for debugging purposes, report the state of\n"
    "                   various variables during processing.\n"
    "     -V, --version: Print version.\n";

const OptionSpec kSpecs[] = {
    {'a', "allsteps", OptionSpec::kNone},  {'e', "helpformat", OptionSpec::kNone},
    {'h', "help", OptionSpec::kNone},      {'i', "pidformat", OptionSpec::kNone},
    {'j', "jobs", OptionSpec::kRequired},  {'n', "noheader", OptionSpec::kNone},
    {0, "noconvert", OptionSpec::kNone},   {'o', "format", OptionSpec::kRequired},
    {0, "fields", OptionSpec::kRequired},  {'p', "parsable", OptionSpec::kNone},
    {'P', "parsable2", OptionSpec::kNone}, {0, "usage", OptionSpec::kNone},
    {'v', "verbose", OptionSpec::kNone},   {'V', "version", OptionSpec::kNone},
};

constexpr uint32_t kBatchStep = 4294967294u;
constexpr uint32_t kExternStep = 4294967291u;

// One step of the job on one node, as its agent answered.
struct NodeStep {
  std::string node;
  v1::StepUsageReply::Step usage;
};

// A step over all its nodes.
struct StepTotals {
  uint64_t job_id = 0;
  uint32_t step_id = 0;
  std::vector<NodeStep> nodes;
  uint32_t Tasks() const {
    uint32_t tasks = 0;
    for (const NodeStep& node : nodes) tasks += node.usage.tasks();
    return tasks;
  }
};

std::string StepName(uint64_t job, uint32_t step) {
  if (step == kBatchStep) return fmt::format("{}.batch", job);
  if (step == kExternStep) return fmt::format("{}.extern", job);
  return fmt::format("{}.{}", job, step);
}

// Slurm's sizes: kibibytes with K, unless they convert to a larger unit exactly enough.
std::string Kib(uint64_t kib, bool noconvert) {
  if (noconvert || kib < 1024) return fmt::format("{}K", kib);
  double value = static_cast<double>(kib);
  const char* units = "KMGTP";
  int unit = 0;
  while (value >= 1024 && unit < 4) value /= 1024, ++unit;
  return fmt::format("{:.2f}{}", value, units[unit]);
}

std::string Cpu(double seconds) {
  auto total = static_cast<int64_t>(seconds);
  int64_t days = total / 86400, hours = total % 86400 / 3600, minutes = total % 3600 / 60;
  int64_t secs = total % 60;
  if (days) return fmt::format("{}-{:02}:{:02}:{:02}", days, hours, minutes, secs);
  return fmt::format("{:02}:{:02}:{:02}", hours, minutes, secs);
}

// The node a measure is largest on (sstat's Max*Node, Max*Task).
template <typename Measure>
const NodeStep* Largest(const StepTotals& step, Measure measure) {
  const NodeStep* best = nullptr;
  for (const NodeStep& node : step.nodes)
    if (!best || measure(node.usage) > measure(best->usage)) best = &node;
  return best;
}

struct Field {
  const char* name;
  int width;
  std::string (*value)(const StepTotals&, bool noconvert);
};

uint64_t Mean(uint64_t total, uint32_t tasks) {
  return tasks ? total / tasks : 0;
}

template <typename Get>
uint64_t Sum(const StepTotals& step, Get get) {
  uint64_t total = 0;
  for (const NodeStep& node : step.nodes) total += get(node.usage);
  return total;
}

// Per task on a node: a node's sum spread over its tasks (the processes of one task are not
// told apart from its node's others).
double PerTask(double value, uint32_t tasks) {
  return tasks ? value / tasks : value;
}

// The node whose tasks used the least CPU each (sstat's MinCPU*).
const NodeStep* LeastCpu(const StepTotals& step) {
  const NodeStep* least = nullptr;
  for (const NodeStep& n : step.nodes)
    if (!least || PerTask(n.usage.cpu_seconds(), n.usage.tasks()) <
                      PerTask(least->usage.cpu_seconds(), least->usage.tasks()))
      least = &n;
  return least;
}

using Step = v1::StepUsageReply::Step;
using Measure = uint64_t (*)(const Step&);
uint64_t MaxVsize(const Step& u) {
  return u.max_vsize_kib();
}
uint64_t MaxRss(const Step& u) {
  return u.max_rss_kib();
}
uint64_t Pages(const Step& u) {
  return u.pages();
}

// Max<measure>, Max<measure>Node and Max<measure>Task: the node with the most, its name, its
// lowest task.
template <Measure measure, bool kKib>
std::string MaxOf(const StepTotals& s, bool noconvert) {
  const NodeStep* n = Largest(s, measure);
  if (!n) return "0";
  return kKib ? Kib(measure(n->usage), noconvert) : std::to_string(measure(n->usage));
}
template <Measure measure>
std::string MaxNodeOf(const StepTotals& s, bool) {
  const NodeStep* n = Largest(s, measure);
  return n ? n->node : std::string();
}
template <Measure measure>
std::string MaxTaskOf(const StepTotals& s, bool) {
  const NodeStep* n = Largest(s, measure);
  return n ? std::to_string(n->usage.first_task()) : std::string();
}

// Slurm's gres/gpumem and gres/gpuutil in the TRESUsageIn* strings, where the agents read the
// job's GPUs through NVML: `mode` 'x' the largest node's, 'a' the mean a task, 't' the total.
std::string GpuTres(const StepTotals& s, bool noconvert, char mode) {
  uint64_t memory = 0;
  double utilization = 0;
  bool read = false;
  for (const NodeStep& n : s.nodes) {
    if (n.usage.gpus_read() == 0) continue;
    read = true;
    if (mode == 'x') {
      memory = std::max(memory, n.usage.gpu_memory_kib());
      utilization = std::max(utilization, n.usage.gpu_utilization_percent());
    } else {
      memory += n.usage.gpu_memory_kib();
      utilization += n.usage.gpu_utilization_percent();
    }
  }
  if (!read) return "";
  if (mode == 'a') {
    memory = Mean(memory, s.Tasks());
    utilization = PerTask(utilization, s.Tasks());
  }
  return fmt::format("gres/gpumem={},gres/gpuutil={:.0f},", Kib(memory, noconvert), utilization);
}

const Field kFields[] = {
    {"JobID", -12, [](const StepTotals& s, bool) { return StepName(s.job_id, s.step_id); }},
    {"MaxVMSize", 10, MaxOf<MaxVsize, true>},
    {"MaxVMSizeNode", 14, MaxNodeOf<MaxVsize>},
    {"MaxVMSizeTask", 14, MaxTaskOf<MaxVsize>},
    {"AveVMSize", 10,
     [](const StepTotals& s, bool nc) {
       return Kib(Mean(Sum(s, [](const auto& u) { return u.vsize_kib(); }), s.Tasks()), nc);
     }},
    {"MaxRSS", 10, MaxOf<MaxRss, true>},
    {"MaxRSSNode", 10, MaxNodeOf<MaxRss>},
    {"MaxRSSTask", 10, MaxTaskOf<MaxRss>},
    {"AveRSS", 10,
     [](const StepTotals& s, bool nc) {
       return Kib(Mean(Sum(s, [](const auto& u) { return u.rss_kib(); }), s.Tasks()), nc);
     }},
    {"MaxPages", 8, MaxOf<Pages, false>},
    {"MaxPagesNode", 14, MaxNodeOf<Pages>},
    {"MaxPagesTask", 14, MaxTaskOf<Pages>},
    {"AvePages", 10,
     [](const StepTotals& s, bool) {
       return std::to_string(Mean(Sum(s, [](const auto& u) { return u.pages(); }), s.Tasks()));
     }},
    {"MinCPU", 10,
     [](const StepTotals& s, bool) {
       const NodeStep* n = LeastCpu(s);
       return Cpu(n ? PerTask(n->usage.cpu_seconds(), n->usage.tasks()) : 0);
     }},
    {"MinCPUNode", 10,
     [](const StepTotals& s, bool) {
       const NodeStep* n = LeastCpu(s);
       return n ? n->node : std::string();
     }},
    {"MinCPUTask", 10,
     [](const StepTotals& s, bool) {
       const NodeStep* n = LeastCpu(s);
       return n ? std::to_string(n->usage.first_task()) : std::string();
     }},
    {"AveCPU", 10,
     [](const StepTotals& s, bool) {
       double total = 0;
       for (const NodeStep& n : s.nodes) total += n.usage.cpu_seconds();
       return Cpu(PerTask(total, s.Tasks()));
     }},
    {"NTasks", 8, [](const StepTotals& s, bool) { return std::to_string(s.Tasks()); }},
    {"TRESUsageInMax", 14,
     [](const StepTotals& s, bool nc) {
       uint64_t rss = 0, vmem = 0, pages = 0;
       double cpu = 0;
       for (const NodeStep& n : s.nodes) {
         rss = std::max(rss, n.usage.max_rss_kib());
         vmem = std::max(vmem, n.usage.max_vsize_kib());
         pages = std::max(pages, n.usage.pages());
         cpu = std::max(cpu, n.usage.cpu_seconds());
       }
       return fmt::format("cpu={},{}mem={},pages={},vmem={}", Cpu(cpu), GpuTres(s, nc, 'x'),
                          Kib(rss, nc), pages, Kib(vmem, nc));
     }},
    {"TRESUsageInAve", 14,
     [](const StepTotals& s, bool nc) {
       uint32_t tasks = s.Tasks();
       double cpu = 0;
       for (const NodeStep& n : s.nodes) cpu += n.usage.cpu_seconds();
       return fmt::format(
           "cpu={},{}mem={},pages={},vmem={}", Cpu(PerTask(cpu, tasks)), GpuTres(s, nc, 'a'),
           Kib(Mean(Sum(s, [](const auto& u) { return u.rss_kib(); }), tasks), nc),
           Mean(Sum(s, [](const auto& u) { return u.pages(); }), tasks),
           Kib(Mean(Sum(s, [](const auto& u) { return u.vsize_kib(); }), tasks), nc));
     }},
    {"TRESUsageInTot", 14,
     [](const StepTotals& s, bool nc) {
       double cpu = 0;
       for (const NodeStep& n : s.nodes) cpu += n.usage.cpu_seconds();
       return fmt::format("cpu={},{}mem={},pages={},vmem={}", Cpu(cpu), GpuTres(s, nc, 't'),
                          Kib(Sum(s, [](const auto& u) { return u.rss_kib(); }), nc),
                          Sum(s, [](const auto& u) { return u.pages(); }),
                          Kib(Sum(s, [](const auto& u) { return u.vsize_kib(); }), nc));
     }},
};

constexpr const char* kDefaultFormat =
    "JobID,MaxVMSize,MaxVMSizeNode,MaxVMSizeTask,AveVMSize,MaxRSS,MaxRSSNode,MaxRSSTask,AveRSS,"
    "MaxPages,MaxPagesNode,MaxPagesTask,AvePages,MinCPU,MinCPUNode,MinCPUTask,AveCPU,NTasks,"
    "TRESUsageInAve,TRESUsageInMax,TRESUsageInTot";

const Field* FindField(std::string_view name) {
  for (const Field& field : kFields)
    if (EqualsIgnoreCase(name, field.name)) return &field;
  return nullptr;
}

struct Request {
  uint64_t job_id = 0;
  std::optional<uint32_t> step_id;
};

// "12", "12.3", "12.batch", "12.extern".
std::optional<Request> ParseJobStep(const std::string& text) {
  Request request;
  size_t dot = text.find('.');
  std::optional<uint64_t> job = ParseUint64(text.substr(0, dot));
  if (!job || *job == 0) return std::nullopt;
  request.job_id = *job;
  if (dot == std::string::npos) return request;
  std::string step = text.substr(dot + 1);
  if (step == "batch")
    request.step_id = kBatchStep;
  else if (step == "extern")
    request.step_id = kExternStep;
  else if (std::optional<uint64_t> number = ParseUint64(step); number && *number < kExternStep)
    request.step_id = static_cast<uint32_t>(*number);
  else
    return std::nullopt;
  return request;
}

// Each node's answer for the job, its agent found through the controller.
Result<std::vector<NodeStep>> AskNodes(Connection& connection, const Request& request,
                                       bool verbose) {
  auto running = FindRunningJob(connection, request.job_id);
  if (!running) return MakeError(running.error());
  if (!running->refusal.empty())
    return MakeError(fmt::format("no steps running for job {}", request.job_id));
  std::vector<NodeStep> answers;
  v1::StepUsageRequest usage_request;
  usage_request.set_job_id(request.job_id);
  if (request.step_id) usage_request.set_step_id(*request.step_id);
  for (const NodeAgent& node : running->agents) {
    if (node.address.empty()) continue;
    if (verbose)
      std::fprintf(stderr, "sstat: asking droverd of node %s at %s\n", node.name.c_str(),
                   node.address.c_str());
    auto channel = auth::NewChannel(node.address, connection.cluster, grpc::ChannelArguments(),
                                    *connection.authenticator);
    if (!channel) return MakeError(channel.error());
    auto stub = v1::Agent::NewStub(*channel);
    grpc::ClientContext context;
    SetDeadline(context);
    context.AddMetadata(kAgentNodeMetadata, node.name);
    v1::StepUsageReply reply;
    grpc::Status status = stub->StepUsage(&context, usage_request, &reply);
    if (!status.ok())
      return MakeError(fmt::format("Unable to connect to droverd of node {} at {}: {}", node.name,
                                   node.address, status.error_message()));
    for (const v1::StepUsageReply::Step& step : reply.steps())
      answers.push_back(NodeStep{node.name, step});
  }
  return answers;
}

}  // namespace

std::vector<OptionSpec> SstatOptionTable() {
  return {std::begin(kSpecs), std::end(kSpecs)};
}

int RunSstat(Arguments args) {
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kSpecs);
  if (!parsed) return OptionError("sstat", parsed.error());
  if (parsed->Has("help")) return std::fputs(kSstatHelp, stdout) < 0 ? 1 : 0;
  if (parsed->Has("usage")) return std::fputs(kSstatUsage, stdout) < 0 ? 1 : 0;
  if (parsed->Has("version")) return PrintSlurmVersion();
  if (parsed->Has("helpformat")) {
    std::string line;
    for (const Field& field : kFields) line += fmt::format("{:<20}", field.name);
    std::puts(line.c_str());
    return 0;
  }
  std::optional<std::string> jobs = parsed->Last("jobs");
  if (!jobs || !parsed->operands.empty()) {
    std::fputs("sstat: error: You didn't give me any jobs to stat.\n", stderr);
    return 1;
  }
  std::vector<Request> requests;
  for (const std::string& item : CommaList(*jobs)) {
    std::optional<Request> request = ParseJobStep(item);
    if (!request) return Fail("sstat", "Invalid job id: " + item);
    requests.push_back(*request);
  }
  std::string format = parsed->Last("format").value_or(parsed->Last("fields").value_or(""));
  if (parsed->Has("pidformat"))
    return Fail("sstat",
                "-i/--pidformat is not supported: use `scontrol listpids JOBID` on the "
                "job's nodes");
  if (format.empty()) format = kDefaultFormat;
  std::vector<const Field*> fields;
  for (const std::string& name : CommaList(format)) {
    const Field* field = FindField(name.substr(0, name.find('%')));
    if (!field)
      return Fail(
          "sstat",
          fmt::format("Invalid field requested: \"{}\" (sstat --helpformat lists them)", name));
    fields.push_back(field);
  }
  const bool noconvert = parsed->Has("noconvert");
  const bool parsable = parsed->Has("parsable"), parsable2 = parsed->Has("parsable2");
  auto connection = Connect(ConnectMode::kLean);
  if (!connection) return Fail("sstat", connection.error());
  std::vector<StepTotals> shown;
  for (const Request& request : requests) {
    auto answers = AskNodes(*connection, request, parsed->Has("verbose"));
    if (!answers) return Fail("sstat", answers.error());
    std::map<uint32_t, StepTotals> steps;
    for (NodeStep& answer : *answers) {
      StepTotals& step = steps[answer.usage.step_id()];
      step.job_id = request.job_id;
      step.step_id = answer.usage.step_id();
      step.nodes.push_back(std::move(answer));
    }
    // No step named: every running step with -a, else the lowest numbered one (not the batch
    // or extern step), as Slurm's sstat.
    for (auto& [id, step] : steps) {
      bool regular = id < kExternStep;
      if (request.step_id || parsed->Has("allsteps") || regular) shown.push_back(step);
      if (!request.step_id && !parsed->Has("allsteps") && regular) break;
    }
  }
  auto print = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t i = 0; i < cells.size(); ++i) {
      if (parsable || parsable2) {
        line += cells[i];
        if (parsable || i + 1 < cells.size()) line += '|';
      } else {
        int width = fields[i]->width;
        // Too long for its column: cut, with a '+' at the end, as Slurm's fields are.
        const auto room = static_cast<size_t>(std::abs(width));
        std::string cell = cells[i].size() > room ? cells[i].substr(0, room - 1) + "+" : cells[i];
        line +=
            width < 0 ? fmt::format("{:<{}}", cell, -width) : fmt::format("{:>{}}", cell, width);
        if (i + 1 < cells.size()) line += ' ';
      }
    }
    std::puts(line.c_str());
  };
  if (!parsed->Has("noheader")) {
    std::vector<std::string> names;
    for (const Field* field : fields) names.emplace_back(field->name);
    print(names);
    if (!parsable && !parsable2) {
      std::vector<std::string> dashes;
      for (const Field* field : fields)
        dashes.emplace_back(static_cast<size_t>(std::abs(field->width)), '-');
      print(dashes);
    }
  }
  for (const StepTotals& step : shown) {
    std::vector<std::string> cells;
    for (const Field* field : fields) cells.push_back(field->value(step, noconvert));
    print(cells);
  }
  return 0;
}

}  // namespace drover::cli
