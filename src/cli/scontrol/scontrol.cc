// `scontrol`: its options, the dispatch of its commands, and the actions that change the
// controller's state — update, hold/uhold/release, requeue/requeuehold, suspend/resume,
// create/update/delete reservation — each one RPC. `show` and `ping` are in scontrol_show.cc.
#include <fmt/format.h>

#include <pwd.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <algorithm>
#include <chrono>
#include <thread>

#include "cli/client.h"
#include "cli/clusters.h"
#include "cli/commands.h"
#include "cli/formats/formats.h"
#include "cli/scontrol/scontrol.h"
#include "cli/scontrol/scontrol_keywords.h"
#include "cli/scontrol/scontrol_request.h"
#include "common/duration.h"
#include "common/getopt.h"
#include "common/log.h"
#include "common/text.h"
#include "wire/metadata.h"

namespace drover::cli {
namespace scontrol {
namespace {

constexpr std::string_view kUsage =
    "Usage: scontrol [OPTIONS] [COMMAND [ARGUMENTS]]   (no command: commands from stdin)\n"
    "  -a, --all         hidden partitions too      --hide  not (the default)\n"
    "  -d, --details     more detail (show job: DerivedExitCode, JOB_GRES, CPU_IDs per node)\n"
    "  -F, --future      nodes in FUTURE state too  -M, --clusters=NAME  this cluster only\n"
    "  -o, --oneliner    one line per record        --json  show ... as JSON\n"
    "  -Q, --quiet       no messages for actions that succeed\n"
    "  -u, --uid=USER    update as USER (the controller acts as the authenticated caller)\n"
    "  -v, --verbose     -V, --version   --federation, --local, --sibling (no federation)\n"
    "Commands (any unambiguous prefix Slurm takes: sh, upd, ...):\n"
    "  show job|node|partition|reservation|step [ID], show ENTITY=ID\n"
    "  show config|topology|licenses|aliases|daemons|assoc_mgr|burstbuffer|federation|frontend\n"
    "  show hostnames|hostlist|hostlistsorted LIST\n"
    "  ping  version  completing  errnumstr N  wait_job JOB  cluster NAME\n"
    "  update JobId=ID|JobName=NAME KEY=VALUE...\n"
    "  update NodeName=LIST [State=DRAIN|RESUME|DOWN|UNDRAIN|FAIL|NoResp|CANCEL_REBOOT]\n"
    "         [Reason=TEXT]\n"
    "         [Weight=N] [Features=|AvailableFeatures=|ActiveFeatures=LIST] [Comment=] [Extra=]\n"
    "  create|update PartitionName=NAME KEY=VALUE... (slurm.conf's partition keys)\n"
    "  delete PartitionName=NAME        write batch_script JOBID [FILE|-]   write config [FILE]\n"
    "  hold|uhold|release JOBID...      requeue|requeuehold JOBID...\n"
    "  suspend|resume JOBID...          top JOBID...      reconfigure\n"
    "  notify JOBID MESSAGE (the batch job's stderr)\n"
    "  reboot [ASAP] [nextstate=RESUME|DOWN] [reason=TEXT] ALL|NODES   cancel_reboot NODES\n"
    "  listpids [JOBID[.STEPID]] [NODENAME]   pidinfo PID   (this host's jobs' processes)\n"
    "  setdebug LEVEL   setdebugflags +FLAG|-FLAG...   schedloglevel enable|disable\n"
    "  create|update reservation ReservationName=NAME StartTime= Duration=|EndTime=\n"
    "         Nodes=|NodeCnt=|TRES= Users=|Accounts= [Flags=] [PartitionName=]\n"
    "  delete ReservationName=NAME | delete reservation NAME\n"
    "  oneliner details all hide quiet verbose exit quit help (interactive)\n";

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
  auto request = ParseJobUpdate(words, std::time(nullptr));
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

// create|update PartitionName=P ...: Slurm's "slurm_update error" / "Error creating the
// partition" before the controller's reason.
int ChangePartition(std::span<const std::string> words, bool create) {
  auto request = ParsePartitionUpdate(words, create);
  if (!request) return Error(request.error() + "\nRequest aborted");
  v1::ActionReply reply;
  Status done = Invoke(*request, reply, [](auto& stub, auto* context, auto& in, auto* out) {
    return stub.UpdatePartition(context, in, out);
  });
  if (!done)
    return Error(fmt::format(
        "{}: {}", create ? "Error creating the partition" : "slurm_update error", done.error()));
  return 0;
}

int DeletePartition(const std::string& name) {
  v1::DeletePartitionRequest request;
  request.set_name(name);
  v1::ActionReply reply;
  Status done = Invoke(request, reply, [](auto& stub, auto* context, auto& in, auto* out) {
    return stub.DeletePartition(context, in, out);
  });
  if (!done) return Error(fmt::format("delete_partition {}: {}", name, done.error()));
  return 0;
}

// write batch_script JOBID [FILE|-]: the script as the controller keeps it for the live job;
// the file is slurm-JOBID.sh unless named, "-" is stdout. A failed retrieval leaves no file.
int WriteBatchScript(std::span<const std::string> words) {
  auto id = ParseUint64(words[0]);
  if (!id || *id == 0) return Error("job script retrieval failed: Invalid job id specified");
  std::string path = words.size() > 1 ? words[1] : fmt::format("slurm-{}.sh", *id);
  auto connection = Connect();
  if (!connection) return Error("scontrol: error: " + connection.error());
  v1::JobScriptRequest request;
  request.set_job_id(*id);
  v1::JobScriptReply reply;
  grpc::ClientContext context;
  SetDeadline(context);
  context.AddMetadata(wire::kLiveScriptKey, "1");
  grpc::Status status = connection->stub->JobScript(&context, request, &reply);
  if (!status.ok() || !reply.found()) {
    std::string why =
        status.error_code() == grpc::StatusCode::NOT_FOUND           ? "Invalid job id specified"
        : status.error_code() == grpc::StatusCode::PERMISSION_DENIED ? "Invalid user id"
        : !status.ok()                                               ? Unreachable(status)
                                                                     : "Job script not specified";
    return Error("job script retrieval failed: " + why);
  }
  if (path == "-") return std::fputs(reply.script().c_str(), stdout) < 0 ? 1 : 0;
  FILE* out = std::fopen(path.c_str(), "w");
  if (!out) return Error(fmt::format("failed to open file `{}`: {}", path, std::strerror(errno)));
  bool written = std::fputs(reply.script().c_str(), out) >= 0;
  if (std::fclose(out) != 0 || !written) {
    std::remove(path.c_str());
    return Error(fmt::format("failed to write file `{}`: {}", path, std::strerror(errno)));
  }
  std::printf("batch script for job %lu written to %s\n", static_cast<unsigned long>(*id),
              path.c_str());
  return 0;
}

// notify JOBID MESSAGE...: the words joined by spaces, as Slurm's scontrol_job_notify.
int Notify(std::span<const std::string> words, std::string_view tag) {
  if (words.size() < 2) return Error(fmt::format("too few arguments for keyword:{}", tag));
  auto id = ParseUint64(words[0]);
  if (!id || *id == 0 || *id > UINT32_MAX)
    return Error(
        fmt::format("Invalid job_id {}\njob notify failure: Invalid job id specified", words[0]));
  v1::NotifyRequest request;
  request.set_job_id(*id);
  request.set_message(Join({words.begin() + 1, words.end()}, " "));
  v1::ActionReply reply;
  Status done = Invoke(request, reply, [](auto& stub, auto* context, auto& in, auto* out) {
    return stub.Notify(context, in, out);
  });
  if (!done) return Error("job notify failure: " + done.error());
  return 0;
}

// write batch_script JOB [FILE] | write config [FILE]: Slurm's argument checks.
int Write(std::span<const std::string> words, const Flags& flags) {
  if (words.empty()) return Error("too few arguments for keyword:write");
  if (MatchesKeyword(words[0], "batch_script", 5)) {
    if (words.size() < 2) return Error(fmt::format("too few arguments for keyword:{}", words[0]));
    if (words.size() > 3) return Error(fmt::format("too many arguments for keyword:{}", words[0]));
    return WriteBatchScript(words.subspan(1));
  }
  if (MatchesKeyword(words[0], "config", 1)) {
    if (words.size() > 2) return Error(fmt::format("too many arguments for keyword:{}", words[0]));
    return RunWriteConfig(flags, words.size() == 2 ? std::optional(words[1]) : std::nullopt);
  }
  return Error(fmt::format("invalid write argument: {}", words[0]));
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

int DeleteReservation(const std::string& name) {
  v1::DeleteReservationRequest request;
  request.set_name(name);
  v1::ActionReply reply;
  Status done = Invoke(request, reply, [](auto& stub, auto* context, auto& in, auto* out) {
    return stub.DeleteReservation(context, in, out);
  });
  if (!done) return Error(fmt::format("delete_reservation {}: {}", name, done.error()));
  return 0;
}

// Which entity an update names, as Slurm's _update_it finds it: any word's key (JobId= may
// come after Partition=), the job's first.
enum class Target { kNone, kJob, kNode, kPartition, kReservation };

Target UpdateTarget(std::span<const std::string> words) {
  bool job = false, node = false, partition = false, reservation = false;
  for (const std::string& word : words) {
    std::string_view key = std::string_view(word).substr(0, word.find('='));
    if (key.ends_with('+') || key.ends_with('-')) key.remove_suffix(1);
    job |= MatchesKeyword(key, "jobid", 3) || MatchesKeyword(key, "jobname", 3) ||
           EqualsIgnoreCase(key, "job");
    node |= MatchesKeyword(key, "nodename", 3) || EqualsIgnoreCase(key, "node");
    partition |= MatchesKeyword(key, "partitionname", 3);
    reservation |=
        MatchesKeyword(key, "reservationname", 3) || EqualsIgnoreCase(key, "reservation");
  }
  if (job) return Target::kJob;
  if (reservation) return Target::kReservation;
  if (node) return Target::kNode;
  if (partition) return Target::kPartition;
  return Target::kNone;
}

int Update(std::span<const std::string> words, const Flags& flags) {
  if (words.empty()) return Error("too few arguments for update keyword");
  switch (UpdateTarget(words)) {
    case Target::kJob:
      return UpdateJob(words);
    case Target::kNode:
      return UpdateNode(words);
    case Target::kReservation:
      return ChangeReservation(words, false, flags);
    case Target::kPartition:
      return ChangePartition(words, false);
    case Target::kNone:
      break;
  }
  return Error(
      "No valid entity in update command\nInput line must include \"NodeName\", "
      "\"PartitionName\", \"Reservation\", \"JobId\", or \"SlurmctldDebug\"");
}

int Create(std::span<const std::string> words, const Flags& flags) {
  if (words.empty()) return Error("too few arguments for create keyword");
  for (const std::string& word : words) {
    std::string_view key = std::string_view(word).substr(0, word.find('='));
    if (MatchesKeyword(key, "nodename", 3))
      return Error(
          "scontrol: error: Drover does not create nodes at run time: add them to slurm.conf and "
          "restart droverctld and the agents");
    if (MatchesKeyword(key, "partitionname", 3) || EqualsIgnoreCase(key, "partition"))
      return ChangePartition(words, true);
    if (MatchesKeyword(key, "reservationname", 3) || EqualsIgnoreCase(key, "reservation"))
      return ChangeReservation(words, true, flags);
  }
  return Error(fmt::format("scontrol: error: Invalid creation entity: {}", words[0]));
}

// delete ENTITY=ID or delete ENTITY ID.
int Delete(std::span<const std::string> words) {
  if (words.empty()) return Error("too few arguments for delete keyword");
  constexpr std::string_view kFormat =
      "scontrol: error: Proper format is 'delete <ENTITY>=<ID>' or 'delete <ENTITY> <ID>'";
  if (words.size() > 2 || (words.size() == 1 && words[0].find('=') == std::string::npos))
    return Error(std::string(kFormat));
  std::string_view key = std::string_view(words[0]).substr(0, words[0].find('='));
  std::string value = words.size() == 2 ? words[1] : SplitKeyValue(words[0]).second;
  if (MatchesKeyword(key, "reservationname", 3)) return DeleteReservation(value);
  if (MatchesKeyword(key, "partitionname", 3) || EqualsIgnoreCase(key, "partition"))
    return DeletePartition(value);
  if (MatchesKeyword(key, "nodename", 3))
    return Error(
        "scontrol: error: Drover does not delete nodes at run time: remove them from slurm.conf "
        "and restart droverctld and the agents");
  return Error(fmt::format("Invalid deletion entity: {}", words[0]));
}

int TooMany(std::string_view tag) {
  return Error(fmt::format("too many arguments for keyword:{}", tag));
}

// setdebug, setdebugflags, schedloglevel: one SetDebug call; `what` names it in Slurm's error.
int SendDebug(v1::SetDebugRequest& request, std::string_view what) {
  v1::ActionReply reply;
  Status done = Invoke(request, reply, [](auto& stub, auto* context, auto& in, auto* out) {
    return stub.SetDebug(context, in, out);
  });
  if (!done) return Error(fmt::format("{} error: {}", what, done.error()));
  return 0;
}

int ArgumentCount(std::span<const std::string> words, std::string_view tag) {
  if (words.empty()) return Error(fmt::format("too few arguments for keyword:{}", tag));
  return words.size() > 1 ? TooMany(tag) : 0;
}

// setdebug LEVEL: a level name (quiet ... debug5) or its number 0-9.
int SetDebug(std::span<const std::string> words, std::string_view tag) {
  if (int refused = ArgumentCount(words, tag)) return refused;
  if (!log::ParseLevel(words[0])) return Error("invalid debug level: " + words[0]);
  v1::SetDebugRequest request;
  request.set_level(words[0]);
  return SendDebug(request, "slurm_set_debug_level");
}

// setdebugflags +FLAG|-FLAG...: only the flags Drover has messages for (common/log.h).
int SetDebugFlags(std::span<const std::string> words, std::string_view tag) {
  if (words.empty()) return Error(fmt::format("too few arguments for keyword:{}", tag));
  v1::SetDebugRequest request;
  for (const std::string& word : words) {
    bool signed_word = !word.empty() && (word[0] == '+' || word[0] == '-');
    if (!signed_word || !log::ParseFlag(std::string_view(word).substr(1)))
      return Error("invalid debug flag: " + word +
                   (signed_word ? "" : "\nUsage: setdebugflags [+|-]NAME"));
    request.add_flags(word);
  }
  return SendDebug(request, "slurm_set_debug_flags");
}

// schedloglevel disable|enable|0|1.
int SchedLogLevel(std::span<const std::string> words, std::string_view tag) {
  if (int refused = ArgumentCount(words, tag)) return refused;
  const std::string& word = words[0];
  int level = EqualsIgnoreCase(word, "disable") ? 0
              : EqualsIgnoreCase(word, "enable")
                  ? 1
                  : (word == "0" || word == "1" ? word[0] - '0' : -1);
  if (level < 0) return Error("invalid schedlog level: " + word);
  v1::SetDebugRequest request;
  request.set_sched_log_level(level);
  return SendDebug(request, "slurm_set_schedlog_level");
}

int ErrorNumber(std::span<const std::string> words, std::string_view tag) {
  if (words.size() != 1) return Error(fmt::format("one arguments required for keyword:{}", tag));
  char* end = nullptr;
  long number = std::strtol(words[0].c_str(), &end, 10);  // as Slurm reads it
  if (*end != '\0' || number < INT32_MIN || number > INT32_MAX)
    return Error(fmt::format("numeric arguments required for keyword:{}", tag));
  std::printf("%s\n", ErrorNumberText(static_cast<int>(number)).c_str());
  return 0;
}

// cluster NAME: Drover's commands speak to one cluster; its own name (or none) is accepted.
int SelectCluster(std::span<const std::string> words) {
  if (words.empty()) return 0;
  auto cluster = LoadCluster();
  if (!cluster) return Error("scontrol: error: " + cluster.error());
  if (auto error = ClustersError(words[0], cluster->settings.cluster_name))
    return Error("scontrol: error: " + *error);
  return 0;
}

// Jobs in COMPLETING state with their nodes, as Slurm's scontrol_print_completing prints them.
int Completing() {
  auto connection = Connect();
  if (!connection) return Error("scontrol: error: " + connection.error());
  v1::JobQuery query;
  query.mutable_filter()->set_state("COMPLETING");
  v1::JobList list;
  grpc::Status status = ListAllJobs(*connection, query, &list);
  if (!status.ok()) return Error("slurm_load_jobs error: " + Unreachable(status));
  for (const std::string& bytes : list.jobs()) {
    v1::Job job;
    job.ParseFromString(bytes);
    if (job.state() != "COMPLETING") continue;
    std::string end = columns::IsoTime(job.end_time());
    std::printf("JobId=%lu EndTime=%s CompletingTime=%s Nodes(COMPLETING)=%s\n",
                static_cast<unsigned long>(job.spec().job_id()), end.c_str(),
                FormatDurationPadded(std::max<int64_t>(0, list.time() - job.end_time())).c_str(),
                job.node_list().c_str());
  }
  return 0;
}

// wait_job JOB: until the job's nodes are ready to run it (it is running), as
// slurm_job_node_ready waits; an error once it can no longer start.
int WaitJob(std::span<const std::string> words) {
  v1::JobFilter filter;
  if (words.size() != 1 || !AddJobId(words[0], &filter)) return Error("Invalid job id specified");
  auto connection = Connect();
  if (!connection) return Error("scontrol: error: " + connection.error());
  for (int wait_ms = 100;; wait_ms = std::min(wait_ms * 2, 2000)) {
    v1::JobQuery query;
    query.set_all_states(true);
    *query.mutable_filter() = filter;  // the job alone, chosen by the controller
    v1::JobList list;
    grpc::Status status = ListAllJobs(*connection, query, &list);
    if (!status.ok()) return Error("slurm_job_node_ready error: " + Unreachable(status));
    std::optional<std::string> state;
    for (const std::string& bytes : list.jobs()) {
      v1::Job job;
      job.ParseFromString(bytes);
      const v1::JobSpec& spec = job.spec();
      bool match = filter.job_ids_size()
                       ? spec.job_id() == filter.job_ids(0)
                       : spec.array_job_id() == filter.array_tasks(0).array_job_id() &&
                             spec.array_task_id() == filter.array_tasks(0).task_id();
      if (match) state = job.state();
    }
    if (!state) return Error("Invalid job id specified");
    if (*state == "RUNNING" || *state == "SUSPENDED") return 0;
    if (*state != "PENDING" && *state != "CONFIGURING")
      return Error("Job/step already completing or completed");
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
  }
}

// reboot [ASAP] [nextstate=] [reason=] ALL|NODES: the controller refuses it without RebootProgram.
int Reboot(std::span<const std::string> words) {
  auto request = ParseReboot(words);
  if (!request) return Error(request.error());
  v1::ActionReply reply;
  Status done = Invoke(*request, reply, [](auto& stub, auto* context, auto& in, auto* out) {
    return stub.RebootNodes(context, in, out);
  });
  if (!done) return Error("scontrol_reboot_nodes error: " + done.error());
  return 0;
}

// cancel_reboot NODES: a reboot already issued cannot be cancelled ("Reboot already in
// progress").
int CancelReboot(std::span<const std::string> words, std::string_view tag) {
  if (words.empty()) return Error(fmt::format("too few arguments for keyword:{}", tag));
  if (words.size() > 1) return TooMany(tag);
  v1::RebootRequest request;
  request.set_nodes(words[0]);
  request.set_cancel(true);
  v1::ActionReply reply;
  Status done = Invoke(request, reply, [](auto& stub, auto* context, auto& in, auto* out) {
    return stub.RebootNodes(context, in, out);
  });
  if (!done) return Error("slurm_update error: " + done.error());
  return 0;
}

// takeover [INDEX]: the controller in charge hands control to SlurmctldHost line INDEX (1, the
// first backup, by default) and becomes a standby; waits until that one leads.
int Takeover(std::span<const std::string> words, std::string_view tag) {
  if (words.size() > 1) return TooMany(tag);
  auto connection = Connect();
  if (!connection) return Error("slurm_takeover error: " + connection.error());
  const std::vector<ControllerHost>& hosts = connection->cluster.settings.controller_hosts;
  size_t index = 1;
  if (!words.empty()) {
    std::optional<int64_t> parsed = ParseInt64(words[0]);
    if (!parsed || *parsed < 1 || static_cast<size_t>(*parsed) >= std::max<size_t>(hosts.size(), 2))
      return Error(fmt::format("Invalid takeover index: {}", words[0]));
    index = static_cast<size_t>(*parsed);
  }
  if (hosts.size() < 2)
    return Error("slurm_takeover error: no backup controller: slurm.conf names one SlurmctldHost");
  v1::TakeoverRequest request;
  request.set_to(hosts[index].name);
  v1::ActionReply reply;
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::Status status = connection->stub->Takeover(&context, request, &reply);
  if (!status.ok()) return Error("slurm_takeover error: " + Unreachable(status));
  // The backup takes the lease at its next look, then loads the state.
  const int64_t wait =
      std::max<int64_t>(connection->cluster.settings.slurmctld_timeout_seconds, 1) + 10;
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(wait);
       std::chrono::steady_clock::now() < deadline;
       std::this_thread::sleep_for(std::chrono::milliseconds(200))) {
    std::vector<ControllerPing> pings = PingEveryController(*connection);
    if (index < pings.size() && pings[index].up && !pings[index].standby) return 0;
  }
  return Error(fmt::format("slurm_takeover error: {} did not take control within {} s",
                           hosts[index].name, wait));
}

// token [lifespan=SECONDS] [username=NAME]: a JWT for the REST API (AuthAltTypes=auth/jwt),
// printed as Slurm's scontrol prints it, ready for `export`.
int Token(std::span<const std::string> words) {
  v1::TokenRequest request;
  for (const std::string& word : words) {
    size_t equals = word.find('=');
    std::string_view key = std::string_view(word).substr(0, equals);
    std::string value = equals == std::string::npos ? std::string() : word.substr(equals + 1);
    if (equals != std::string::npos && EqualsIgnoreCase(key, "lifespan")) {
      std::optional<int64_t> seconds = ParseInt64(value);
      if (!seconds || *seconds < 1) return Error(fmt::format("Invalid lifespan: {}", value));
      request.set_lifespan_seconds(*seconds);
    } else if (equals != std::string::npos && EqualsIgnoreCase(key, "username") && !value.empty()) {
      request.set_user_name(value);
    } else {
      return Error(fmt::format("Invalid parameter: {}", word));
    }
  }
  auto connection = Connect();
  if (!connection) return Error("slurm_request_token error: " + connection.error());
  v1::TokenReply reply;
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::Status status = connection->stub->Token(&context, request, &reply);
  if (!status.ok()) return Error("slurm_request_token error: " + Unreachable(status));
  fmt::print("SLURM_JWT={}\n", reply.token());
  return 0;
}

int NotYet(std::string_view command, std::string_view issue) {
  return Error(
      fmt::format("scontrol: error: Drover does not support '{}' yet ({})", command, issue));
}

using Handler = int (*)(std::span<const std::string> words, Flags& flags, std::string_view tag);

struct Command {
  Keyword keyword;
  Handler run;
};

int SetFlag(std::span<const std::string> words, std::string_view tag, bool& flag, bool value) {
  flag = value;
  return words.empty() ? 0 : TooMany(tag);
}

// Slurm 22.05's commands in the order its _process_command tries them (the first match wins),
// each with the shortest abbreviation Slurm takes.
const Command kCommands[] = {
    {{"abort", 5},
     [](auto, auto&, auto) { return NotYet("abort", "stop the controller with `drover down`"); }},
    {{"all", 2}, [](auto w, auto& f, auto tag) { return SetFlag(w, tag, f.all, true); }},
    {{"cancel_reboot", 3}, [](auto w, auto&, auto tag) { return CancelReboot(w, tag); }},
    {{"completing", 2},
     [](auto w, auto&, auto tag) { return w.empty() ? Completing() : TooMany(tag); }},
    {{"cluster", 2}, [](auto w, auto&, auto) { return SelectCluster(w); }},
    {{"create", 2}, [](auto w, auto& f, auto) { return Create(w, f); }},
    {{"details", 1}, [](auto w, auto& f, auto tag) { return SetFlag(w, tag, f.details, true); }},
    {{"errnumstr", 2}, [](auto w, auto&, auto tag) { return ErrorNumber(w, tag); }},
    {{"errnostr", 2}, [](auto w, auto&, auto tag) { return ErrorNumber(w, tag); }},
    {{"exit", 2}, [](auto w, auto& f, auto tag) { return SetFlag(w, tag, f.exit, true); }},
    {{"help", 2}, [](auto, auto&, auto) { return std::fputs(kUsage.data(), stdout) < 0 ? 1 : 0; }},
    {{"hide", 2},
     [](auto w, auto& f, auto tag) {
       f.details = false;
       return SetFlag(w, tag, f.all, false);
     }},
    {{"listpids", 1}, [](auto w, auto&, auto) { return ListPids(w); }},
    {{"notify", 1}, [](auto w, auto&, auto tag) { return Notify(w, tag); }},
    {{"oneliner", 1}, [](auto w, auto& f, auto tag) { return SetFlag(w, tag, f.one_liner, true); }},
    {{"pidinfo", 3}, [](auto w, auto&, auto) { return PidInfo(w); }},
    {{"ping", 3}, [](auto w, auto& f, auto tag) { return w.empty() ? RunPing(f) : TooMany(tag); }},
    {{"quiet", 4}, [](auto w, auto& f, auto tag) { return SetFlag(w, tag, f.quiet, true); }},
    {{"quit", 4}, [](auto w, auto& f, auto tag) { return SetFlag(w, tag, f.exit, true); }},
    {{"reboot_nodes", 3}, [](auto w, auto&, auto) { return Reboot(w); }},
    {{"reconfigure", 3}, [](auto w, auto& f, auto) { return Reconfigure(w, f); }},
    {{"requeue", 3}, [](auto w, auto&, auto) { return Requeue(w, false); }},
    {{"requeuehold", 11}, [](auto w, auto&, auto) { return Requeue(w, true); }},
    {{"hold", 4}, [](auto w, auto&, auto) { return Hold(w, false); }},
    {{"holdu", 5}, [](auto w, auto&, auto) { return Hold(w, false); }},
    {{"uhold", 5}, [](auto w, auto&, auto) { return Hold(w, false); }},
    {{"release", 3}, [](auto w, auto&, auto) { return Hold(w, true); }},
    {{"suspend", 2}, [](auto w, auto&, auto) { return Suspend(w, false); }},
    {{"resume", 3}, [](auto w, auto&, auto) { return Suspend(w, true); }},
    {{"top", 3}, [](auto w, auto&, auto) { return Top(w); }},
    {{"token", 3}, [](auto w, auto&, auto) { return Token(w); }},
    {{"write", 2}, [](auto w, auto& f, auto) { return Write(w, f); }},
    {{"wait_job", 2},
     [](auto w, auto&, auto tag) { return w.size() > 1 ? TooMany(tag) : WaitJob(w); }},
    {{"setdebugflags", 9}, [](auto w, auto&, auto tag) { return SetDebugFlags(w, tag); }},
    {{"setdebug", 2}, [](auto w, auto&, auto tag) { return SetDebug(w, tag); }},
    {{"schedloglevel", 3}, [](auto w, auto&, auto tag) { return SchedLogLevel(w, tag); }},
    {{"show", 3}, [](auto w, auto& f, auto) { return RunShow(f, w); }},
    {{"takeover", 8}, [](auto w, auto&, auto tag) { return Takeover(w, tag); }},
    {{"shutdown", 8},
     [](auto, auto&, auto) { return NotYet("shutdown", "stop the cluster with `drover down`"); }},
    {{"update", 1}, [](auto w, auto& f, auto) { return Update(w, f); }},
    {{"delete", 1}, [](auto w, auto&, auto) { return Delete(w); }},
    {{"verbose", 4},
     [](auto w, auto& f, auto tag) {
       ++f.verbose;
       return w.empty() ? 0 : TooMany(tag);
     }},
    {{"version", 4},
     [](auto w, auto&, auto tag) { return w.empty() ? PrintSlurmVersion() : TooMany(tag); }},
};

int Dispatch(std::span<const std::string> words, Flags& flags) {
  const std::string& tag = words[0];
  for (const Command& command : kCommands)
    if (MatchesKeyword(tag, command.keyword.name, command.keyword.min_length))
      return command.run(words.subspan(1), flags, tag);
  return Error(fmt::format("invalid keyword: {}", tag));
}

// No command on the command line: commands from stdin, one a line, with a "scontrol: " prompt
// when stdin is a terminal, until end of input, `exit` or `quit`. The exit status is 1 when any
// command failed, as Slurm's is.
int Interactive(Flags& flags) {
  bool tty = isatty(STDIN_FILENO);
  int status = 0;
  std::string line;
  while (!flags.exit) {
    if (tty) std::fputs("scontrol: ", stdout), std::fflush(stdout);
    int c;
    line.clear();
    while ((c = std::getchar()) != EOF && c != '\n') line += static_cast<char>(c);
    if (c == EOF && line.empty()) break;
    auto words = SplitCommandLine(line);
    if (!words) {
      status = Error("scontrol: error: " + words.error());
      continue;
    }
    if (words->empty()) continue;
    if (Dispatch(*words, flags) != 0) status = 1;
    std::fflush(stdout);
  }
  return status;
}

}  // namespace
}  // namespace scontrol

namespace {
constexpr OptionSpec kSpecs[] = {
    {'o', "oneliner", OptionSpec::kNone}, {'d', "details", OptionSpec::kNone},
    {0, "json", OptionSpec::kNone},       {'a', "all", OptionSpec::kNone},
    {'Q', "quiet", OptionSpec::kNone},    {'v', "verbose", OptionSpec::kNone},
    {'V', "version", OptionSpec::kNone},  {'h', "help", OptionSpec::kNone},
    {0, "usage", OptionSpec::kNone},      {'M', "clusters", OptionSpec::kRequired},
    {0, "federation", OptionSpec::kNone}, {0, "local", OptionSpec::kNone},
    {0, "sibling", OptionSpec::kNone},    {'F', "future", OptionSpec::kNone},
    {0, "hide", OptionSpec::kNone},       {'u', "uid", OptionSpec::kRequired}};

// -u/--uid: a user name or number that exists, as Slurm checks it. The controller acts as the
// caller its credential proves, as slurmctld acts on the authenticated uid.
bool KnownUser(const std::string& text) {
  if (getpwnam(text.c_str())) return true;
  auto number = ParseUint64(text);
  return number && *number < UINT32_MAX && getpwuid(static_cast<uid_t>(*number));
}

// -M/--clusters or SLURM_CLUSTERS: the local cluster only.
std::optional<std::string> ClustersProblem(const ParsedOptions& parsed) {
  auto requested = ClustersRequested(parsed.Last("clusters"), Environment());
  if (!requested) return std::nullopt;
  auto cluster = scontrol::LoadCluster();
  if (!cluster) return cluster.error();
  return ClustersError(*requested, cluster->settings.cluster_name);
}
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
    if (option == "uid" && !KnownUser(value))
      return scontrol::Error(fmt::format("scontrol: error: --uid=\"{}\" invalid", value));
    flags.one_liner |= option == "oneliner";
    flags.details |= option == "details";
    flags.json |= option == "json";
    if (option == "all") flags.all = true;
    if (option == "hide") flags.all = false;
    flags.quiet |= option == "quiet";
    flags.verbose += option == "verbose";
  }
  if (auto problem = ClustersProblem(*parsed))
    return scontrol::Error("scontrol: error: " + *problem);
  if (parsed->operands.empty()) return scontrol::Interactive(flags);
  return scontrol::Dispatch(parsed->operands, flags);
}

}  // namespace drover::cli
