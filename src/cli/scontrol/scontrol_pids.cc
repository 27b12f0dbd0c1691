// scontrol listpids [JOBID[.STEPID]] [NODENAME] and pidinfo PID: asked of this host's agent
// (the ListPids RPC), found through the address it keeps in its spool directory, as Slurm's
// scontrol finds slurmstepd through SlurmdSpoolDir. pidinfo then asks the controller when the
// job ends.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

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

// The processes `request` names, from node `node`'s agent.
Result<v1::ListPidsReply> AskAgent(const Connection& connection, const std::string& node,
                                   const v1::ListPidsRequest& request) {
  if (connection.cluster.FindNode(node) < 0)
    return MakeError(fmt::format("Node {} not found", node));
  auto address = ReadAgentAddress(AgentSpoolDir(connection.cluster.settings, node));
  if (!address) return MakeError(fmt::format("node {}: {}", node, address.error()));
  auto channel = auth::NewChannel(*address, connection.cluster, grpc::ChannelArguments(),
                                  *connection.authenticator);
  if (!channel) return MakeError(channel.error());
  auto stub = v1::Agent::NewStub(*channel);
  grpc::ClientContext context;
  SetDeadline(context);
  v1::ListPidsReply reply;
  grpc::Status status = stub->ListPids(&context, request, &reply);
  if (!status.ok())
    return MakeError(fmt::format("Unable to connect to droverd of node {} at {}: {}", node,
                                 *address, status.error_message()));
  return reply;
}

// listpids names one node: the one given, else this host's (several emulated nodes here: ask).
Result<std::string> OneLocalNode(const ClusterConfig& cluster) {
  std::vector<std::string> nodes = LocalNodes(cluster, HostName(), NodeFromEnvironment());
  if (nodes.size() == 1) return nodes[0];
  if (nodes.empty())
    return MakeError(fmt::format(
        "no node of slurm.conf runs on this host ({}); give the node's name: scontrol listpids "
        "JOBID NODENAME",
        HostName()));
  return MakeError(fmt::format(
      "nodes {} all run on this host; give one: scontrol listpids JOBID NODENAME (or set "
      "SLURMD_NODENAME)",
      Join(nodes, ",")));
}

Result<v1::Job> FindJob(const Connection& connection, uint64_t job_id) {
  v1::JobQuery query;
  query.mutable_filter()->add_job_ids(job_id);
  query.set_all_states(true);
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
  Result<std::string> node =
      words.size() == 2 ? Result<std::string>(words[1]) : OneLocalNode(connection->cluster);
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

}  // namespace drover::cli::scontrol
