// scontrol listpids [JOBID[.STEPID]] [NODENAME], pidinfo PID and show slurmd [NODENAME]: asked
// of this host's agent (the ListPids and DaemonStatus RPCs), found through the address it keeps
// in its spool directory, as Slurm's scontrol finds slurmstepd through SlurmdSpoolDir. pidinfo
// then asks the controller when the job ends.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <optional>
#include <string_view>

#include "auth/grpc_auth.h"
#include "cli/client.h"
#include "cli/scontrol/scontrol.h"
#include "cli/scontrol/scontrol_pids.h"
#include "common/agent_address.h"
#include "common/text.h"

namespace drover::cli::scontrol {
namespace {

int Error(const std::string& line) {
  std::fprintf(stderr, "%s\n", line.c_str());
  return 1;
}

std::string HostName() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

std::string NodeFromEnvironment() {
  const char* named = std::getenv("SLURMD_NODENAME");
  return named ? named : "";
}

// Node `node`'s agent, at the address it keeps in its spool directory.
struct AgentLink {
  std::string address;
  std::unique_ptr<v1::Agent::Stub> stub;
};
Result<AgentLink> ConnectAgent(const Connection& connection, const std::string& node) {
  if (connection.cluster.FindNode(node) < 0)
    return MakeError(fmt::format("Node {} not found", node));
  auto address = ReadAgentAddress(AgentSpoolDir(connection.cluster.settings, node));
  if (!address) return MakeError(fmt::format("node {}: {}", node, address.error()));
  auto channel = auth::NewChannel(*address, connection.cluster, grpc::ChannelArguments(),
                                  *connection.authenticator);
  if (!channel) return MakeError(channel.error());
  return AgentLink{*address, v1::Agent::NewStub(*channel)};
}

std::string Unreached(const std::string& node, const AgentLink& agent, const grpc::Status& status) {
  return fmt::format("Unable to connect to droverd of node {} at {}: {}", node, agent.address,
                     status.error_message());
}

// The processes `request` names, from node `node`'s agent.
Result<v1::ListPidsReply> AskAgent(const Connection& connection, const std::string& node,
                                   const v1::ListPidsRequest& request) {
  auto agent = ConnectAgent(connection, node);
  if (!agent) return std::move(agent).take_error();
  grpc::ClientContext context;
  SetDeadline(context);
  context.AddMetadata(kAgentNodeMetadata, node);
  v1::ListPidsReply reply;
  grpc::Status status = agent->stub->ListPids(&context, request, &reply);
  if (!status.ok()) return MakeError(Unreached(node, *agent, status));
  return reply;
}

// listpids and show slurmd name one node: the one given, else this host's (several emulated
// nodes here: ask).
Result<std::string> OneLocalNode(const ClusterConfig& cluster, std::string_view command) {
  std::vector<std::string> nodes = LocalNodes(cluster, HostName(), NodeFromEnvironment());
  if (nodes.size() == 1) return nodes[0];
  if (nodes.empty())
    return MakeError(fmt::format(
        "no node of slurm.conf runs on this host ({}); give the node's name: scontrol {}",
        HostName(), command));
  return MakeError(
      fmt::format("nodes {} all run on this host; give one: scontrol {} (or set SLURMD_NODENAME)",
                  Join(nodes, ","), command));
}

Result<v1::Job> FindJob(const Connection& connection, uint64_t job_id) {
  v1::JobQuery query;
  query.mutable_filter()->add_job_ids(job_id);
  query.set_all_states(true);
  query.set_limit(1);  // the job itself; an array's ID would bring its tasks after it
  v1::JobList list;
  grpc::ClientContext context;
  SetDeadline(context);
  grpc::Status status = connection.stub->ListJobs(&context, query, &list);
  if (!status.ok()) return MakeError(Unreachable(status));
  for (const std::string& bytes : list.jobs()) {
    v1::Job job;
    if (job.ParseFromString(bytes) && job.spec().job_id() == job_id) return job;
  }
  return MakeError("Invalid job id specified");
}

}  // namespace

int ListPids(std::span<const std::string> words) {
  if (words.size() > 2) return Error("too many arguments for keyword:listpids");
  auto request = ParsePidsTarget(words.empty() ? "" : words[0]);
  if (!request) return Error(request.error());
  auto connection = Connect();
  if (!connection) return Error("scontrol: error: " + connection.error());
  Result<std::string> node = words.size() == 2
                                 ? Result<std::string>(words[1])
                                 : OneLocalNode(connection->cluster, "listpids JOBID NODENAME");
  if (!node) return Error("scontrol: error: " + node.error());
  auto reply = AskAgent(*connection, *node, *request);
  if (!reply) return Error("scontrol: error: " + reply.error());
  if (reply->pids_size() == 0) return Error(NoPidsText(*request));
  std::fputs(PidsText(*reply).c_str(), stdout);
  return 0;
}

int PidInfo(std::span<const std::string> words) {
  if (words.size() > 1) return Error("too many arguments for keyword:pidinfo");
  if (words.empty()) return Error("too few arguments for keyword:pidinfo");
  auto pid = ParseUint64(words[0]);
  auto connection = Connect();
  if (!connection) return Error("scontrol: error: " + connection.error());
  // A pid is this host's: any agent here may have started it.
  uint64_t job_id = 0;
  for (const std::string& node :
       LocalNodes(connection->cluster, HostName(), NodeFromEnvironment())) {
    auto reply = AskAgent(*connection, node, v1::ListPidsRequest());
    if (!reply) return Error("scontrol: error: " + reply.error());
    for (const v1::ListPidsReply::Pid& entry : reply->pids())
      if (pid && static_cast<uint64_t>(entry.pid()) == *pid) job_id = entry.job_id();
    if (job_id) break;
  }
  if (!job_id) return Error("slurm_pid2jobid error: Invalid job id specified");
  auto job = FindJob(*connection, job_id);
  if (!job) return Error("slurm_get_end_time error: " + job.error());
  std::fputs(PidInfoText(job_id, JobEndTime(*job), std::time(nullptr)).c_str(), stdout);
  return 0;
}

// show slurmd [NODENAME]: the agent of this host's node (or the one named), as Slurm's scontrol
// asks the slurmd on its own host.
int ShowSlurmd(const std::optional<std::string>& named) {
  auto connection = Connect();
  if (!connection) return Error("scontrol: error: " + connection.error());
  Result<std::string> node = named ? Result<std::string>(*named)
                                   : OneLocalNode(connection->cluster, "show slurmd NODENAME");
  if (!node) return Error("scontrol: error: " + node.error());
  auto agent = ConnectAgent(*connection, *node);
  if (!agent) return Error("slurm_load_slurmd_status: " + agent.error());
  grpc::ClientContext context;
  SetDeadline(context);
  context.AddMetadata(kAgentNodeMetadata, *node);
  v1::AgentStatusReply reply;
  grpc::Status status = agent->stub->DaemonStatus(&context, v1::AgentStatusRequest(), &reply);
  if (!status.ok()) return Error("slurm_load_slurmd_status: " + Unreached(*node, *agent, status));
  std::fputs(SlurmdStatusText(reply).c_str(), stdout);
  return 0;
}

}  // namespace drover::cli::scontrol
