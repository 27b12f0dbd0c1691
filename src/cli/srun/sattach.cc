// sattach (sattach(1)): attaches to a running step's I/O. Each node of the job whose agent runs
// some of the step's tasks streams their output (as srun gets it) until they end; what sattach
// reads on its stdin goes to task 0. sattach's end leaves the step running.
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "auth/grpc_auth.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "cli/query/query_common.h"
#include "cli/srun/step_streams.h"
#include "common/agent_address.h"
#include "common/getopt.h"
#include "common/hostlist.h"
#include "common/text.h"

namespace drover::cli {
namespace {

const OptionSpec kSpecs[] = {
    {0, "error-filter", OptionSpec::kOptional},
    {'h', "help", OptionSpec::kNone},
    {0, "input-filter", OptionSpec::kOptional},
    {'l', "label", OptionSpec::kNone},
    {0, "layout", OptionSpec::kNone},
    {0, "output-filter", OptionSpec::kOptional},
    {0, "pty", OptionSpec::kNone},
    {'Q', "quiet", OptionSpec::kNone},
    {'u', "usage", OptionSpec::kNone},
    {'v', "verbose", OptionSpec::kNone},
    {'V', "version", OptionSpec::kNone},
};

constexpr char kUsage[] = "Usage: sattach [options] <jobid.stepid>\n";
constexpr char kHelp[] =
    "Usage: sattach [options] <jobid.stepid>\n"
    "      --input-filter=taskid  send stdin to only the specified task\n"
    "      --output-filter=taskid only print stdout from the specified task\n"
    "      --error-filter=taskid  only print stderr from the specified task\n"
    "  -l, --label        prepend task number to lines of stdout & stderr\n"
    "      --layout       print task layout info and exit (does not attach to tasks)\n"
    "  -Q, --quiet        quiet mode (suppress informational messages)\n"
    "  -v, --verbose      verbose mode (multiple -v's increase verbosity)\n"
    "  -V, --version      print the Slurm version and exit\n"
    "\nHelp options:\n"
    "  -h, --help         print this help message\n"
    "  -u, --usage        print a brief usage message\n";

int Error(const std::string& message) {
  std::fprintf(stderr, "sattach: error: %s\n", message.c_str());
  return 1;
}

struct Attachment {
  std::string node;
  std::unique_ptr<v1::Agent::Stub> stub;
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReaderWriter<v1::StepAttachInput, v1::StepOutput>> stream;
  v1::StepAttached layout;
  std::mutex write_mutex;
};

}  // namespace

std::vector<OptionSpec> SattachOptionTable() {
  return {std::begin(kSpecs), std::end(kSpecs)};
}

int RunSattach(Arguments args) {
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kSpecs);
  if (!parsed) return OptionError("sattach", parsed.error());
  if (parsed->Has("help")) return std::fputs(kHelp, stdout) < 0 ? 1 : 0;
  if (parsed->Has("usage")) return std::fputs(kUsage, stdout) < 0 ? 1 : 0;
  if (parsed->Has("version")) return PrintSlurmVersion();
  if (parsed->operands.size() != 1) {
    std::fputs(kUsage, stderr);
    return 1;
  }
  if (parsed->Has("pty"))
    return Error(
        "--pty: Drover's sattach attaches to the step's output and task 0's stdin, not "
        "to a terminal; attach without --pty");
  const std::string& name = parsed->operands[0];
  size_t dot = name.find('.');
  std::optional<uint64_t> job_id = ParseUint64(name.substr(0, dot));
  std::optional<uint64_t> step_id =
      dot == std::string::npos ? std::nullopt : ParseUint64(name.substr(dot + 1));
  if (!job_id || !step_id || *step_id >= 4294967290u)
    return Error(fmt::format("Invalid job step {}: give JOBID.STEPID", name));
  // The filters: a task number (empty: every task).
  auto filter = [&](const char* option) -> std::optional<std::optional<uint32_t>> {
    std::optional<std::string> value = parsed->Last(option);
    if (!value || value->empty()) return std::optional<uint32_t>();
    std::optional<uint64_t> task = ParseUint64(*value);
    if (!task || *task > 1'000'000) return std::nullopt;
    return std::optional<uint32_t>(static_cast<uint32_t>(*task));
  };
  auto output_filter = filter("output-filter"), error_filter = filter("error-filter"),
       input_filter = filter("input-filter");
  if (!output_filter || !error_filter || !input_filter)
    return Error("a filter takes a task number");
  if (*input_filter && **input_filter != 0)
    return Error(fmt::format("--input-filter={}: stdin reaches task 0 only here", **input_filter));
  const bool label = parsed->Has("label"), quiet = parsed->Has("quiet"),
             verbose = parsed->Has("verbose");

  auto connection = Connect(ConnectMode::kLean);
  if (!connection) return Error(connection.error());
  auto running = FindRunningJob(*connection, *job_id);
  if (!running) return Error(running.error());
  if (!running->refusal.empty()) return Error(running->refusal);
  // Each node of the job is asked; those that run none of the step's tasks say so.
  std::vector<std::unique_ptr<Attachment>> attached;
  for (const NodeAgent& node : running->agents) {
    if (node.address.empty()) continue;
    auto channel = auth::NewChannel(node.address, connection->cluster, grpc::ChannelArguments(),
                                    *connection->authenticator);
    if (!channel) return Error(channel.error());
    auto one = std::make_unique<Attachment>();
    one->node = node.name;
    one->stub = v1::Agent::NewStub(*channel);
    one->context.AddMetadata(kAgentNodeMetadata, node.name);
    one->stream = one->stub->AttachStep(&one->context);
    v1::StepAttachInput first;
    first.set_job_id(*job_id);
    first.set_step_id(static_cast<uint32_t>(*step_id));
    v1::StepOutput reply;
    if (!one->stream->Write(first) || !one->stream->Read(&reply) || !reply.has_attached()) {
      one->stream->WritesDone();
      grpc::Status ended = one->stream->Finish();
      if (ended.error_code() == grpc::StatusCode::PERMISSION_DENIED)
        return Error(ended.error_message());
      if (verbose)
        std::fprintf(stderr, "sattach: %s: %s\n", node.name.c_str(), ended.error_message().c_str());
      continue;
    }
    one->layout = reply.attached();
    attached.push_back(std::move(one));
  }
  if (attached.empty())
    return Error(fmt::format("Job step {}.{} not found: it is not running", *job_id, *step_id));
  std::sort(attached.begin(), attached.end(), [](const auto& a, const auto& b) {
    return a->layout.node_index() < b->layout.node_index();
  });

  if (parsed->Has("layout")) {
    const v1::StepAttached& any = attached.front()->layout;
    std::printf("Job step layout:\n\t%u tasks, %u nodes (%s)\n\n", any.ntasks(), any.nnodes(),
                any.node_list().c_str());
    for (const auto& one : attached) {
      std::string tasks;
      for (uint32_t task : one->layout.tasks()) tasks += fmt::format("{} ", task);
      if (!tasks.empty()) tasks.pop_back();
      std::printf("\tNode %u (%s), %d task(s): %s\n", one->layout.node_index(), one->node.c_str(),
                  one->layout.tasks_size(), tasks.c_str());
    }
    for (auto& one : attached) {
      one->context.TryCancel();
      one->stream->Finish();
    }
    return 0;
  }

  // stdin to the node of task 0, from a thread that may block on a terminal (sattach ends with
  // _exit, as srun does).
  Attachment* task0 = nullptr;
  for (const auto& one : attached)
    for (uint32_t task : one->layout.tasks())
      if (task == 0) task0 = one.get();
  if (task0)
    std::thread([task0] {
      char buffer[16384];
      while (true) {
        ssize_t got = ::read(0, buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        v1::StepAttachInput input;
        input.set_stdin_data(buffer, static_cast<size_t>(got));
        std::lock_guard<std::mutex> lock(task0->write_mutex);
        if (!task0->stream->Write(input)) break;
      }
    }).detach();

  TaskOutput printed(label);
  auto emit = [&](uint32_t task, bool is_stderr, const std::string& data) {
    const std::optional<uint32_t>& only = is_stderr ? *error_filter : *output_filter;
    if (!only || *only == task) printed.Write(task, is_stderr, data);
  };
  std::vector<std::thread> readers;
  for (auto& one : attached)
    readers.emplace_back([&, node = one.get()] {
      v1::StepOutput output;
      size_t expected = static_cast<size_t>(node->layout.tasks_size()), ended = 0;
      while (ended < expected && node->stream->Read(&output)) {
        if (!output.data().empty()) emit(output.task(), output.stderr(), output.data());
        ended += static_cast<size_t>(output.ended_size());
      }
      {
        std::lock_guard<std::mutex> lock(node->write_mutex);
        node->stream->WritesDone();
      }
      node->context.TryCancel();
      node->stream->Finish();
    });
  for (std::thread& reader : readers) reader.join();
  printed.FlushPartialLines();
  if (verbose && !quiet) std::fprintf(stderr, "sattach: the step's tasks have ended\n");
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(0);
}

}  // namespace drover::cli
