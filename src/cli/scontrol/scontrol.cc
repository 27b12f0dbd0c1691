// `scontrol`: its options, the dispatch of its commands, and the actions that change the
// controller's state — update, hold/uhold/release, requeue/requeuehold, suspend/resume,
// create/update/delete reservation — each one RPC. `show` and `ping` are in scontrol_show.cc.
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "cli/client.h"
#include "cli/commands.h"
#include "cli/scontrol/scontrol.h"
#include "cli/scontrol/scontrol_request.h"
#include "common/getopt.h"
#include "common/text.h"

namespace drover::cli {
namespace scontrol {
namespace {

constexpr std::string_view kUsage =
    "Usage: scontrol [OPTIONS] COMMAND [ARGUMENTS]\n"
    "  -d, --details     more detail (show job: DerivedExitCode, JOB_GRES, CPU_IDs per node)\n"
    "  -o, --oneliner    one line per record\n"
    "      --json        show ... as JSON\n"
    "  -a, --all         hidden partitions too\n"
    "  -Q, --quiet       no messages for actions that succeed\n"
    "  -V, --version     print the version\n"
    "Commands:\n"
    "  show job|node|partition|reservation [NAME], show config|topology\n"
    "  show hostnames|hostlist|hostlistsorted LIST\n"
    "  ping\n"
    "  update JobId=ID TimeLimit=|Nice=|Partition=|Name=|QOS=...\n"
    "  update NodeName=LIST State=DRAIN|RESUME|DOWN|UNDRAIN [Reason=TEXT]\n"
    "  hold|uhold|release JOBID...      requeue|requeuehold JOBID...\n"
    "  suspend|resume JOBID...          top JOBID...      reconfigure\n"
    "  create|update reservation ReservationName=NAME StartTime= Duration=|EndTime=\n"
    "         Nodes=|NodeCnt=|TRES= Users=|Accounts= [Flags=] [PartitionName=]\n"
    "  delete reservation NAME | delete ReservationName=NAME\n";

int Error(const std::string& line) {
  std::fprintf(stderr, "%s\n", line.c_str());
  return 1;
}

// Connects, sets the caller and a deadline, and runs one call; its error in Slurm's words.
template <typename Request, typename Reply, typename Call>
Status Invoke(Request& request, Reply& reply, Call call) {
  auto connection = Connect();
  if (!connection) return MakeError(connection.error());
  SetCaller(request.mutable_caller());
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::Status status = call(*connection->stub, &context, request, &reply);
  if (!status.ok()) return MakeError(Unreachable(status));
  return Ok{};
}

std::string Ids(std::span<const std::string> words) {
  return Join({words.begin(), words.end()}, ",");
}

// hold, uhold, release.
int Hold(std::span<const std::string> words, bool release) {
  auto filter = ParseJobList(words);
  if (!filter) return Error("slurm_update error: " + filter.error());
  v1::HoldRequest request;
  *request.mutable_filter() = *filter;
  request.set_release(release);
  v1::ActionReply reply;
  Status done = Invoke(request, reply, [](auto& stub, auto* context, auto& in, auto* out) {
    return stub.Hold(context, in, out);
  });
  if (!done) return Error("slurm_update error: " + done.error());
  return 0;
}

int Requeue(std::span<const std::string> words, bool hold) {
  std::vector<std::string> ids(words.begin(), words.end());
  // Inside a job, "scontrol requeue" alone means this job.
  if (ids.empty())
    if (const char* own = std::getenv("SLURM_JOB_ID"); own && *own) ids.push_back(own);
  auto filter = ParseJobList(ids);
  if (!filter) return Error("slurm_requeue error: " + filter.error());
  v1::RequeueRequest request;
  *request.mutable_filter() = *filter;
  request.set_hold(hold);
  v1::ActionReply reply;
  Status done = Invoke(request, reply, [](auto& stub, auto* context, auto& in, auto* out) {
    return stub.Requeue(context, in, out);
  });
  if (!done) return Error(fmt::format("Requeue of job {} failed: {}", Ids(ids), done.error()));
  return 0;
}

int Suspend(std::span<const std::string> words, bool resume) {
  auto filter = ParseJobList(words);
  std::string_view what = resume ? "slurm_resume" : "slurm_suspend";
  if (!filter) return Error(fmt::format("{} error: {}", what, filter.error()));
  v1::SuspendRequest request;
  *request.mutable_filter() = *filter;
  request.set_resume(resume);
  v1::ActionReply reply;
  Status done = Invoke(request, reply, [](auto& stub, auto* context, auto& in, auto* out) {
    return stub.Suspend(context, in, out);
  });
  if (!done) return Error(fmt::format("{} error: {}", what, done.error()));
  return 0;
}

int Top(std::span<const std::string> words) {
  auto request = ParseTopList(words);
  if (!request) return Error("slurm_top_job error: " + request.error());
  v1::ActionReply reply;
  Status done = Invoke(*request, reply, [](auto& stub, auto* context, auto& in, auto* out) {
    return stub.Top(context, in, out);
  });
  if (!done) return Error("slurm_top_job error: " + done.error());
  return 0;
}

int Reconfigure(std::span<const std::string> words, const Flags& flags) {
  if (!words.empty())
    return Error(
        fmt::format("scontrol: error: reconfigure takes no arguments, not '{}'", words[0]));
  v1::ReconfigureRequest request;
  v1::ActionReply reply;
  Status done = Invoke(request, reply, [](auto& stub, auto* context, auto& in, auto* out) {
    return stub.Reconfigure(context, in, out);
  });
  if (!done) return Error("slurm_reconfigure error: " + done.error());
  if (!reply.message().empty() && !flags.quiet)
    std::fprintf(stderr, "scontrol: warning: %s\n", reply.message().c_str());
  return 0;
}

int UpdateJob(std::span<const std::string> words) {
  auto request = ParseJobUpdate(words);
  if (!request) return Error(request.error() + "\nRequest aborted");
  v1::ActionReply reply;
  Status done = Invoke(*request, reply, [](auto& stub, auto* context, auto& in, auto* out) {
    return stub.UpdateJob(context, in, out);
  });
  if (!done) return Error("slurm_update error: " + done.error());
  return 0;
}

int UpdateNode(std::span<const std::string> words) {
  auto request = ParseNodeUpdate(words);
  if (!request) return Error(request.error() + "\nRequest aborted");
  v1::ActionReply reply;
  Status done = Invoke(*request, reply, [](auto& stub, auto* context, auto& in, auto* out) {
    return stub.UpdateNode(context, in, out);
  });
  if (!done) return Error("slurm_update error: " + done.error());
  return 0;
}

int ChangeReservation(std::span<const std::string> words, bool create, const Flags& flags) {
  auto request = ParseReservation(words, std::time(nullptr));
  std::string_view doing = create ? "creating" : "updating";
  if (!request) return Error(fmt::format("Error {} the reservation: {}", doing, request.error()));
  if (!create && request->name().empty())
    return Error("Error updating the reservation: ReservationName must be given");
  v1::ReservationReply reply;
  Status done = Invoke(*request, reply, [create](auto& stub, auto* context, auto& in, auto* out) {
    return create ? stub.CreateReservation(context, in, out)
                  : stub.UpdateReservation(context, in, out);
  });
  if (!done) return Error(fmt::format("Error {} the reservation: {}", doing, done.error()));
  if (!flags.quiet) {
    if (create)
      std::printf("Reservation created: %s\n", reply.name().c_str());
    else
      std::printf("Reservation updated.\n");
  }
  return 0;
}

int DeleteReservation(std::span<const std::string> words) {
  size_t i = !words.empty() && EqualsIgnoreCase(words[0], "reservation") ? 1 : 0;
  if (i >= words.size()) return Error("Error deleting the reservation: give its name");
  auto [key, value] = SplitKeyValue(words[i]);
  v1::DeleteReservationRequest request;
  request.set_name(words[i].find('=') == std::string::npos ? words[i] : value);
  v1::ActionReply reply;
  Status done = Invoke(request, reply, [](auto& stub, auto* context, auto& in, auto* out) {
    return stub.DeleteReservation(context, in, out);
  });
  if (!done) return Error("Error deleting the reservation: " + done.error());
  return 0;
}

// update's first word says what it updates: "JobId=12", "job 12", "NodeName=n1", "node n1", ...
int Update(std::span<const std::string> words, const Flags& flags) {
  if (words.empty()) return Error("scontrol: error: update what? (JobId=, NodeName=, ...)");
  std::string first = SplitKeyValue(words[0]).first;
  if (first == "job" || first == "jobid") return UpdateJob(words);
  if (first == "node" || first == "nodename") return UpdateNode(words);
  if (first == "reservation" || first == "reservationname")
    return ChangeReservation(words, false, flags);
  if (first == "partition" || first == "partitionname")
    return Error(
        "scontrol: error: Drover does not update partitions at run time: edit slurm.conf and "
        "restart droverctld");
  return Error(
      fmt::format("scontrol: error: invalid entity: {} for keyword: update (give JobId=, "
                  "NodeName= or ReservationName=)",
                  words[0]));
}

bool NamesReservation(std::span<const std::string> words) {
  return !words.empty() && (EqualsIgnoreCase(words[0], "reservation") ||
                            StartsWithIgnoreCase(words[0], "reservationname="));
}

int Dispatch(const std::string& command, std::span<const std::string> words, const Flags& flags) {
  if (command == "show") return RunShow(flags, words);
  if (command == "ping") return RunPing(flags);
  if (command == "update") return Update(words, flags);
  if (command == "hold" || command == "uhold") return Hold(words, false);
  if (command == "release") return Hold(words, true);
  if (command == "requeue") return Requeue(words, false);
  if (command == "requeuehold") return Requeue(words, true);
  if (command == "suspend") return Suspend(words, false);
  if (command == "resume") return Suspend(words, true);
  if (command == "create" || command == "delete") {
    if (!NamesReservation(words))
      return Error(fmt::format(
          "scontrol: error: invalid entity for keyword: {} (Drover {}s reservations only)", command,
          command));
    return command == "create" ? ChangeReservation(words, true, flags) : DeleteReservation(words);
  }
  if (command == "top") return Top(words);
  if (command == "reconfigure") return Reconfigure(words, flags);
  return Error(fmt::format("scontrol: error: invalid keyword: {}", command));
}

}  // namespace
}  // namespace scontrol

namespace {
constexpr OptionSpec kSpecs[] = {
    {'o', "oneliner", OptionSpec::kNone}, {'d', "details", OptionSpec::kNone},
    {0, "json", OptionSpec::kNone},       {'a', "all", OptionSpec::kNone},
    {'Q', "quiet", OptionSpec::kNone},    {'v', "verbose", OptionSpec::kNone},
    {'V', "version", OptionSpec::kNone},  {'h', "help", OptionSpec::kNone},
    {0, "usage", OptionSpec::kNone}};
}  // namespace

std::vector<OptionSpec> ScontrolOptionTable() {
  return {std::begin(kSpecs), std::end(kSpecs)};
}

int RunScontrol(Arguments args) {
  std::vector<std::string> words(args.begin(), args.end());
  auto parsed = ParseOptions(words, kSpecs);
  if (!parsed) return OptionError("scontrol", parsed.error());
  scontrol::Flags flags;
  flags.version = DROVER_VERSION;
  for (const auto& [option, value] : parsed->options) {
    if (option == "help" || option == "usage") {
      std::fputs(scontrol::kUsage.data(), stdout);
      return 0;
    }
    if (option == "version") return PrintSlurmVersion();
    flags.one_liner |= option == "oneliner";
    flags.details |= option == "details";
    flags.json |= option == "json";
    flags.all |= option == "all";
    flags.quiet |= option == "quiet";
  }
  if (parsed->operands.empty())
    return scontrol::Error(
        "scontrol: error: no command given (Drover's scontrol has no interactive mode; see "
        "scontrol --help)");
  std::string command = ToLower(parsed->operands[0]);
  if (command == "version") return PrintSlurmVersion();
  std::span<const std::string> rest(parsed->operands);
  return scontrol::Dispatch(command, rest.subspan(1), flags);
}

}  // namespace drover::cli
