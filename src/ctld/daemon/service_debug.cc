// SetDebug: `scontrol setdebug`, `setdebugflags` and `schedloglevel`; Takeover: `scontrol
// takeover`, checked here and carried out by the daemon (leadership.h). The controller's log
// level and debug flags are the process's (common/log.h), so the change needs no engine event:
// it holds from the next message on, and lasts until the controller restarts (slurm.conf's
// SlurmctldDebug then applies again), as in Slurm.
#include <optional>
#include <string>
#include <string_view>

#include "common/log.h"
#include "common/result.h"
#include "ctld/daemon/requests.h"
#include "ctld/daemon/service.h"

namespace drover::ctld {

namespace {

struct DebugChange {
  std::optional<log::Level> level;
  uint64_t add = 0, remove = 0;
};

// The whole request is checked before anything changes.
Result<DebugChange> ChangeOf(const v1::SetDebugRequest& request) {
  DebugChange change;
  if (!request.level().empty()) {
    change.level = log::ParseLevel(request.level());
    if (!change.level) return MakeError("invalid debug level: " + request.level());
  }
  for (const std::string& word : request.flags()) {
    bool minus = !word.empty() && word[0] == '-';
    std::string_view name = word;
    if (!word.empty() && (word[0] == '+' || word[0] == '-')) name.remove_prefix(1);
    std::optional<uint64_t> flag = log::ParseFlag(name);
    if (!flag) return MakeError("invalid debug flag: " + word);
    (minus ? change.remove : change.add) |= *flag;
  }
  return change;
}

void Apply(const DebugChange& change, bool flags_given) {
  if (change.level) {
    log::SetLevel(*change.level);
    log::Info("Set debug level to '{}'", log::LevelName(*change.level));
  }
  if (flags_given)
    log::Info("Set DebugFlags to {}", log::FlagNames(log::ChangeFlags(change.add, change.remove)));
}

}  // namespace

ControllerService::Reactor* ControllerService::SetDebug(Context* context,
                                                        const v1::SetDebugRequest* request,
                                                        v1::ActionReply*) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  // As slurmctld: only root and SlurmUser, and Slurm's EACCES.
  if (!IsOperator(caller)) {
    log::Error("set debug request from non-super user uid={}", caller.uid);
    return Finished(context,
                    grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "Permission denied"));
  }
  if (request->has_sched_log_level()) {
    // Drover writes no scheduler log (SlurmSchedLogFile): Slurm's answer without that file.
    log::Error("set scheduler log level failed: no log file!");
    return Finished(context, grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                          "Requested operation is presently disabled"));
  }
  Result<DebugChange> change = ChangeOf(*request);
  if (!change) return Finished(context, Invalid(change.error()));
  Apply(*change, request->flags_size() > 0);
  return Finished(context, grpc::Status::OK);
}

ControllerService::Reactor* ControllerService::Takeover(Context* context,
                                                        const v1::TakeoverRequest* request,
                                                        v1::ActionReply* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  if (!IsOperator(caller))
    return Finished(context,
                    grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "Permission denied"));
  if (!handover_)
    return Finished(context, grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                          "no backup controller: slurm.conf names one "
                                          "SlurmctldHost, or the state is not in PostgreSQL"));
  const auto& hosts = loop_.snapshot()->cluster->settings.controller_hosts;
  bool known = false;
  for (const ControllerHost& host : hosts) known |= host.name == request->to();
  if (!known || request->to() == name_)
    return Finished(
        context,
        Invalid(request->to() == name_ ? request->to() + " is the controller in charge already"
                                       : "no SlurmctldHost line is named '" + request->to() + "'"));
  log::Info("scontrol takeover from uid {}: handing control to {}", caller.uid, request->to());
  reply->set_message(name_ + " hands control to " + request->to());
  handover_(request->to());
  return Finished(context, grpc::Status::OK);
}

}  // namespace drover::ctld
