// Node events: registration (with re-adoption of the jobs an agent still runs), heartbeats with
// health, administrator updates (drain, resume, down), and the liveness check that marks a
// silent node DOWN and ends or requeues its jobs.
#include <fmt/format.h>

#include <algorithm>

#include "common/hostlist.h"
#include "common/text.h"
#include "ctld/engine/engine.h"

namespace drover::ctld {

namespace {

bool Subset(const std::vector<std::string>& part, const std::vector<std::string>& whole) {
  for (const std::string& item : part)
    if (std::find(whole.begin(), whole.end(), item) == whole.end()) return false;
  return true;
}

std::vector<std::string> FeatureList(const std::string& text) {
  std::vector<std::string> features;
  for (const std::string& item : Split(text, ','))
    if (!item.empty()) features.push_back(item);
  return features;
}

}  // namespace

std::string Engine::UpdateNodeRefusal(const UpdateNode& event) const {
  using Action = UpdateNode::Action;
  if (!IsOperator(event.caller)) return "Access/permission denied";
  bool needs_reason = event.action == Action::kDrain || event.action == Action::kDown ||
                      event.action == Action::kFail;
  if (needs_reason && event.reason.empty())
    return "You must specify a reason when DOWNING or DRAINING a node";
  return "";
}

void Engine::DownNode(int index, EngineOutput& out) {
  std::set<uint64_t> jobs = nodes_[index].jobs;
  for (uint64_t id : jobs) {
    Job& job = Mutable(id, out);
    // -k/--no-kill: a job of several nodes goes on without the lost one, which leaves its
    // allocation (Slurm's excise_node_from_job). Losing the node of its batch shell ends the job
    // as any failure does.
    bool batch_host = !job.spec.interactive && job.BatchNode() == index;
    if (job.spec.no_kill && job.allocation.nodes.size() > 1 && !batch_host) {
      std::erase_if(job.allocation.nodes, [index](const auto& part) { return part.node == index; });
      nodes_[index].jobs.erase(id);
      // Whatever of it still runs there stops, should the node come back.
      out.effects.push_back(TerminateJob{id, {index}, cluster().settings.kill_wait_seconds});
      continue;
    }
    LoseJob(job, out);
  }
}

void Engine::LoseJob(Job& job, EngineOutput& out) {
  if (job.spec.requeue) {
    Requeue(job, JobState::kNodeFail, out);
    return;
  }
  // Its processes stop everywhere (the node's agent too, if it still answers).
  out.effects.push_back(
      TerminateJob{job.spec.job_id, job.NodeIndexes(), cluster().settings.kill_wait_seconds});
  Finish(job, JobState::kNodeFail);
}

// Slurm's _purge_missing_jobs: a batch job running on this node as its batch host, launched
// BatchStartTimeout ago or more, that the registering agent neither runs nor has an end of was
// lost with the node's agent (its spool gone, a node rebooted under it): requeued if it may be,
// else ended NODE_FAIL. A launch still under way (younger) is left to arrive.
void Engine::PurgeMissingJobs(int index, const NodeRegistered& event, EngineOutput& out) {
  std::set<uint64_t> reported(event.running_jobs.begin(), event.running_jobs.end());
  reported.insert(event.ended_jobs.begin(), event.ended_jobs.end());
  const int64_t timeout = cluster().settings.batch_start_timeout_seconds;
  int64_t startup = clock_.Now() - timeout;
  int64_t recheck = 0;
  std::set<uint64_t> jobs = nodes_[index].jobs;
  for (uint64_t id : jobs) {
    auto it = jobs_.find(id);
    if (it == jobs_.end() || reported.count(id)) continue;
    const Job& found = *it->second;
    bool live = found.state == JobState::kRunning || found.state == JobState::kSuspended;
    if (!live || found.spec.interactive || found.BatchNode() != index) continue;
    if (found.start_time > startup) {
      // Still on its way, perhaps; looked at again once it is BatchStartTimeout old.
      recheck = std::max(recheck, found.start_time + timeout + 1);
      continue;
    }
    Job& job = Mutable(id, out);
    job.exit_code = 1;
    LoseJob(job, out);
  }
  nodes_[index].recheck_jobs_at = recheck;
}

void Engine::SetNodeState(const UpdateNode& event, int index, EngineOutput& out) {
  using Action = UpdateNode::Action;
  NodeStatus& node = nodes_[index];
  switch (event.action) {
    case Action::kNone:
      break;
    case Action::kDrain:
      node.drain = true;
      break;
    case Action::kFail:
      node.drain = node.fail = true;
      break;
    case Action::kDown:
      if (!node.down) DownNode(index, out);  // Slurm stops the node's jobs
      node.down = true;
      break;
    case Action::kNoResp:
      node.not_responding = true;  // until the agent is heard from again
      break;
    case Action::kCancelReboot:
      break;  // On(UpdateNode) did it
    case Action::kResume:
    case Action::kUndrain:
      node.drain = node.drained_by_health = node.fail = false;
      if (event.action == Action::kResume) node.down = false;
      break;
  }
  bool with_reason = event.action == Action::kDrain || event.action == Action::kDown ||
                     event.action == Action::kFail;
  if (with_reason || event.action == Action::kResume || event.action == Action::kUndrain) {
    node.reason = with_reason ? event.reason : "";
    node.reason_time = with_reason ? clock_.Now() : 0;
    node.reason_uid = event.caller.uid;
  } else if (!event.reason.empty() && (node.down || node.drain)) {
    node.reason = event.reason;  // Reason= alone: a new reason for a node that has one
    node.reason_time = clock_.Now();
    node.reason_uid = event.caller.uid;
  }
}

void Engine::On(const UpdateNode& event, EngineOutput& out) {
  auto refuse = [&](std::string why) {
    out.effects.push_back(Reply{event.token, false, std::move(why), {}, {}});
  };
  auto names = ExpandHostlist(event.nodes);
  if (!names) return refuse(names.error());
  if (std::string refusal = UpdateNodeRefusal(event); !refusal.empty()) return refuse(refusal);
  std::vector<int> targets;
  for (const std::string& name : *names) {
    int index = cluster().FindNode(name);
    if (index < 0) return refuse(fmt::format("Invalid node name specified ({})", name));
    targets.push_back(index);
  }
  // Features= sets the available and the active features (no node_features plugin changes
  // them apart); ActiveFeatures= must be among the available ones.
  std::optional<std::vector<std::string>> available, active;
  if (event.features) available = active = FeatureList(*event.features);
  if (event.active_features) active = FeatureList(*event.active_features);
  bool reshaped = event.weight || available || active;
  for (int index : targets) {
    const NodeStatus& node = nodes_[index];
    const std::vector<std::string>& has = available       ? *available
                                          : node.features ? *node.features
                                                          : base_->nodes[index].features;
    if (active && !Subset(*active, has))
      return refuse("Active features not subset of available features");
  }
  if (event.action == UpdateNode::Action::kCancelReboot) {
    for (int index : targets)
      if (nodes_[index].reboot_issued) return refuse("Reboot already in progress");
    for (int index : targets) CancelReboot(index);
  }
  auto next = reshaped ? std::make_shared<ClusterConfig>(cluster()) : nullptr;
  for (int index : targets) {
    NodeStatus& node = nodes_[index];
    SetNodeState(event, index, out);
    if (event.weight) node.weight = *event.weight;
    if (available) node.features = *available;
    if (active) {
      if (!node.features) node.features = base_->nodes[index].features;
      node.active_features = *active;
    }
    if (event.comment) node.comment = *event.comment;
    if (event.extra) node.extra = *event.extra;
    if (next) ApplyNodeOverrides(node, next->nodes[index]);
    out.changed_nodes.push_back(index);
  }
  if (next) Adopt(std::move(next), &out);
  schedule_requested_ = true;
  out.effects.push_back(Reply{event.token, true, "", {}, {}});
}

void Engine::On(const NodeRegistered& event, EngineOutput& out) {
  int index = cluster().FindNode(event.node);
  if (index < 0) return;
  NodeStatus& node = nodes_[index];
  node.registered = true;
  node.last_heard = clock_.Now();
  // ReturnToService: 1 returns a node that went DOWN for not responding, 2 any DOWN node.
  int policy = cluster().settings.return_to_service;
  bool silent = node.not_responding || node.reason == "Not responding";
  if (node.down && (policy == 2 || (policy == 1 && silent))) {
    node.down = false;
    node.reason.clear();
  }
  if (node.reboot_issued)
    RebootDone(index);  // the agent is back from RebootProgram: the node takes its next state
  else if (!node.boot_time)
    node.boot_time = clock_.Now();
  node.not_responding = false;
  // A node with less than slurm.conf says is drained, with Slurm's reason.
  if (event.resources) {
    const NodeConfig& config = cluster().nodes[index];
    const NodeResources& found = *event.resources;
    std::string low;
    if (found.cpus && static_cast<int>(found.cpus) < config.cpus)
      low = "Low socket*core*thread count";
    else if (found.memory_mb && found.memory_mb < config.real_memory_mb)
      low = fmt::format("Low RealMemory (reported:{} < 100.00% of configured:{})", found.memory_mb,
                        config.real_memory_mb);
    else if (found.gpus < config.gpu_count())
      low = fmt::format("gres/gpu count reported lower than configured ({} < {})", found.gpus,
                        config.gpu_count());
    if (!low.empty() && !node.drain) {
      node.drain = true;
      node.reason = low;
      node.reason_time = clock_.Now();
      node.reason_uid = 0;
    }
  }
  // What the agent found of its GPUs (NVML's UUIDs, affinity, links) joins the configuration
  // the scheduler places by, once per batch (MergeRegisteredGpus).
  if (!event.gpus.empty() && event.gpus != node.reported_gpus.all()) {
    node.reported_gpus = event.gpus;
    gpus_reported_.push_back(index);
  }
  // Jobs the agent runs that this controller does not think run there are ended; jobs it runs
  // that are ours are re-adopted as they are.
  for (uint64_t id : event.running_jobs) {
    auto it = jobs_.find(id);
    bool ours =
        it != jobs_.end() &&
        (it->second->state == JobState::kRunning || it->second->state == JobState::kSuspended) &&
        node.jobs.count(id) > 0;
    if (!ours) out.effects.push_back(TerminateJob{id, {index}, 0});
  }
  PurgeMissingJobs(index, event, out);
  out.changed_nodes.push_back(index);
  schedule_requested_ = true;
}

// One copy of the configuration for every registration of the batch that changed a node's GPUs
// (a registration storm after a restart is one Adopt, not one per node).
void Engine::MergeRegisteredGpus(EngineOutput& out) {
  if (gpus_reported_.empty()) return;
  std::shared_ptr<ClusterConfig> next;
  for (int index : gpus_reported_) {
    NodeConfig merged = base_->nodes[index];
    MergeReportedGpus(nodes_[index].reported_gpus, merged);
    if (merged.gpus == cluster().nodes[index].gpus) continue;
    if (!next) next = std::make_shared<ClusterConfig>(cluster());
    next->nodes[index].gpus = std::move(merged.gpus);
  }
  gpus_reported_.clear();
  if (next) Adopt(std::move(next), &out);
}

void Engine::On(const Heartbeat& event, EngineOutput& out) {
  int index = cluster().FindNode(event.node);
  if (index < 0) return;
  NodeStatus& node = nodes_[index];
  node.last_heard = clock_.Now();
  if (node.not_responding) {
    node.not_responding = false;
    out.changed_nodes.push_back(index);
  }
  node.gpu_health = event.gpus;
  if (!event.healthy && !node.drain) {
    node.drain = node.drained_by_health = true;
    node.health_latched = event.health_latched;
    node.reason = event.health_output.empty() ? "Health check failed" : event.health_output;
    node.reason_time = clock_.Now();
    node.reason_uid = 0;
    out.changed_nodes.push_back(index);
  } else if (!event.healthy && node.drained_by_health && event.health_latched) {
    if (!node.health_latched) out.changed_nodes.push_back(index);
    node.health_latched = true;  // a GPU's trouble joined the program's: it holds the drain
  } else if (!event.healthy && node.drain && event.health_latched &&
             node.reason.find(event.health_output) == std::string::npos) {
    // Drained already (an operator, a reboot): the GPU's trouble is added to the reason, so the
    // operator who resumes the node sees it.
    node.reason += (node.reason.empty() ? "" : "; ") + event.health_output;
    out.changed_nodes.push_back(index);
  } else if (event.healthy && node.drained_by_health) {
    // A latched drain (an XID, or DroverGpuHealthResume=no) stays until an operator resumes.
    if (!node.health_latched) {
      node.drain = false;
      node.reason.clear();
      schedule_requested_ = true;
    }
    node.drained_by_health = node.health_latched = false;
    out.changed_nodes.push_back(index);
  }
}

void Engine::CheckNodeLiveness(EngineOutput& out) {
  int64_t timeout = cluster().settings.slurmd_timeout_seconds;
  if (timeout <= 0) return;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    NodeStatus& node = nodes_[i];
    if (!node.registered || node.down || clock_.Now() - node.last_heard < timeout) continue;
    node.down = node.not_responding = true;
    node.reason = "Not responding";
    node.reason_time = clock_.Now();
    node.reason_uid = 0;
    out.changed_nodes.push_back(static_cast<int>(i));
    DownNode(static_cast<int>(i), out);
    schedule_requested_ = true;
  }
}

}  // namespace drover::ctld
