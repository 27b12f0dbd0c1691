// scontrol reboot and cancel_reboot, as slurmctld does them: a request waits until the node is
// idle (ASAP also drains it, so no new job delays the reboot), is then issued to the node's agent
// (RebootProgram), and ends when the agent registers again (the node then takes its next state)
// or, after ResumeTimeout without it, with the node DOWN.
#include <fmt/format.h>

#include "common/hostlist.h"
#include "ctld/engine/engine.h"

namespace drover::ctld {

namespace {

constexpr const char* kAsapReason = "Reboot ASAP";
constexpr const char* kDefaultReason = "reboot requested";

// Slurm appends each step of the reboot to the node's reason: "Reboot ASAP : reboot issued".
void AppendReason(NodeStatus& node, std::string_view step, int64_t now) {
  node.reason = node.reason.empty() ? std::string(step) : fmt::format("{} : {}", node.reason, step);
  node.reason_time = now;
  node.reason_uid = 0;
}

}  // namespace

void Engine::On(const RebootNodes& event, EngineOutput& out) {
  auto refuse = [&](std::string why) {
    out.effects.push_back(Reply{event.token, false, std::move(why), {}, {}});
  };
  if (!IsOperator(event.caller)) return refuse("Access/permission denied");
  if (!event.cancel && cluster().settings.reboot_program.empty())
    return refuse("RebootProgram isn't defined");
  std::vector<int> targets;
  if (event.nodes == "ALL") {
    for (size_t i = 0; i < nodes_.size(); ++i) targets.push_back(static_cast<int>(i));
  } else {
    auto names = ExpandHostlist(event.nodes);
    if (!names) return refuse(names.error());
    for (const std::string& name : *names) {
      int index = cluster().FindNode(name);
      if (index < 0) return refuse(fmt::format("Invalid node name specified ({})", name));
      targets.push_back(index);
    }
  }
  for (int index : targets) {
    if (!event.cancel) {
      RequestReboot(event, index);
    } else if (std::string why = CancelReboot(index); !why.empty()) {
      return refuse(why);
    }
    out.changed_nodes.push_back(index);
  }
  IssueReboots(out);
  schedule_requested_ = true;
  out.effects.push_back(Reply{event.token, true, "", {}, {}});
}

void Engine::RequestReboot(const RebootNodes& event, int index) {
  NodeStatus& node = nodes_[index];
  if (node.reboot_issued) return;  // already on its way
  node.reboot_requested = true;
  node.next_state = event.next_state.empty() ? "RESUME" : event.next_state;
  if (event.asap) node.drain = true;  // no new jobs: it reboots as soon as its jobs end
  std::string reason = !event.reason.empty() ? event.reason
                       : event.asap          ? kAsapReason
                       : node.reason.empty() ? kDefaultReason
                                             : "";
  if (!reason.empty()) {
    node.reason = reason;
    node.reason_time = clock_.Now();
    node.reason_uid = event.caller.uid;
  }
}

std::string Engine::CancelReboot(int index) {
  NodeStatus& node = nodes_[index];
  if (node.reboot_issued) return "Reboot already in progress";
  if (!node.reboot_requested) return "";
  node.reboot_requested = false;
  node.next_state.clear();
  // The drain and the reason that the request itself set go with it.
  if (node.reason == kAsapReason) node.drain = false;
  if (node.reason == kAsapReason || node.reason == kDefaultReason) {
    node.reason.clear();
    node.reason_time = 0;
  }
  return "";
}

void Engine::IssueReboots(EngineOutput& out) {
  for (size_t i = 0; i < nodes_.size(); ++i) {
    NodeStatus& node = nodes_[i];
    if (!node.reboot_requested || !node.jobs.empty() || !node.registered || node.down) continue;
    node.reboot_requested = false;
    node.reboot_issued = true;
    AppendReason(node, "reboot issued", clock_.Now());  // reason_time: when it was issued
    out.effects.push_back(RebootNode{static_cast<int>(i), cluster().settings.reboot_program});
    out.changed_nodes.push_back(static_cast<int>(i));
  }
}

void Engine::RebootDone(int index) {
  NodeStatus& node = nodes_[index];
  node.reboot_issued = false;
  node.boot_time = clock_.Now();
  if (node.next_state == "DOWN") {
    node.down = true;
    AppendReason(node, "reboot complete", clock_.Now());
  } else {
    node.down = node.drain = node.drained_by_health = node.fail = false;
    node.reason.clear();
    node.reason_time = 0;
  }
  node.next_state.clear();
}

void Engine::CheckReboots(EngineOutput& out) {
  int64_t timeout = cluster().settings.resume_timeout_seconds;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    NodeStatus& node = nodes_[i];
    if (!node.reboot_issued || clock_.Now() - node.reason_time < timeout) continue;
    node.reboot_issued = false;
    node.next_state.clear();
    node.down = true;
    AppendReason(node, "reboot timed out", clock_.Now());
    DownNode(static_cast<int>(i), out);
    out.changed_nodes.push_back(static_cast<int>(i));
  }
}

}  // namespace drover::ctld
