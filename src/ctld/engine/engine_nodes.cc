// Node events: registration (with re-adoption of the jobs an agent still runs), heartbeats with
// health, administrator updates (drain, resume, down), and the liveness check that marks a
// silent node DOWN and ends or requeues its jobs.
#include <fmt/format.h>

#include "common/hostlist.h"
#include "ctld/engine/engine.h"

namespace drover::ctld {

void Engine::On(const UpdateNode& event, EngineOutput& out) {
  auto names = ExpandHostlist(event.nodes);
  if (!names) return out.effects.push_back(Reply{event.token, false, names.error(), {}, {}});
  if (!IsOperator(event.caller))
    return out.effects.push_back(Reply{event.token, false, "Access/permission denied", {}, {}});
  bool needs_reason =
      event.action == UpdateNode::Action::kDrain || event.action == UpdateNode::Action::kDown;
  if (needs_reason && event.reason.empty())
    return out.effects.push_back(Reply{
        event.token, false, "You must specify a reason when DOWNING or DRAINING a node", {}, {}});
  std::vector<int> targets;
  for (const std::string& name : *names) {
    int index = cluster().FindNode(name);
    if (index < 0)
      return out.effects.push_back(
          Reply{event.token, false, fmt::format("Invalid node name specified ({})", name), {}, {}});
    targets.push_back(index);
  }
  for (int index : targets) {
    NodeStatus& node = nodes_[index];
    switch (event.action) {
      case UpdateNode::Action::kDrain:
        node.drain = true;
        break;
      case UpdateNode::Action::kDown:
        node.down = true;
        break;
      case UpdateNode::Action::kResume:
      case UpdateNode::Action::kUndrain:
        node.drain = node.drained_by_health = false;
        if (event.action == UpdateNode::Action::kResume) node.down = false;
        break;
    }
    node.reason = needs_reason ? event.reason : "";
    node.reason_time = needs_reason ? clock_.Now() : 0;
    node.reason_uid = event.caller.uid;
    out.changed_nodes.push_back(index);
  }
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
  out.changed_nodes.push_back(index);
  schedule_requested_ = true;
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
  if (!event.healthy && !node.drain) {
    node.drain = node.drained_by_health = true;
    node.reason = event.health_output.empty() ? "Health check failed" : event.health_output;
    node.reason_time = clock_.Now();
    node.reason_uid = 0;
    out.changed_nodes.push_back(index);
  } else if (event.healthy && node.drained_by_health) {
    node.drain = node.drained_by_health = false;
    node.reason.clear();
    out.changed_nodes.push_back(index);
    schedule_requested_ = true;
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
    LoseNode(static_cast<int>(i), out);
    schedule_requested_ = true;
  }
}

void Engine::LoseNode(int index, EngineOutput& out) {
  std::set<uint64_t> jobs = nodes_[index].jobs;
  for (uint64_t id : jobs) {
    Job& job = Mutable(id, out);
    // -k/--no-kill: a job of several nodes goes on without the failed one, which leaves its
    // allocation (Slurm's excise_node_from_job). Its batch shell runs on the first node: losing
    // that one ends the job as any failure does.
    bool batch_host = !job.spec.interactive && !job.allocation.nodes.empty() &&
                      job.allocation.nodes.front().node == index;
    if (job.spec.no_kill && job.allocation.nodes.size() > 1 && !batch_host) {
      std::erase_if(job.allocation.nodes, [index](const auto& part) { return part.node == index; });
      nodes_[index].jobs.erase(id);
      continue;
    }
    if (job.spec.requeue) {
      Requeue(job, JobState::kNodeFail, out);
    } else {
      Finish(job, JobState::kNodeFail);
    }
  }
}

}  // namespace drover::ctld
