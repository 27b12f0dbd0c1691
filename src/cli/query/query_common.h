// What squeue, sinfo, sacct and scancel share: their lists ("a,b"), job ids ("12", "12_3"), the
// controller's job and partition lists, and their error line. No command's own logic.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cli/client.h"
#include "common/accounting.h"
#include "common/result.h"
#include "proto/drover.grpc.pb.h"

namespace drover::cli {

// A comma-separated option value, items trimmed, empty ones dropped.
std::vector<std::string> CommaList(const std::string& text);
// "12", "12_3": a job or one task of an array, added to `filter`; false when it is neither.
bool AddJobId(const std::string& text, v1::JobFilter* filter);
// -j's jobs and array tasks ("12", "12_3"): the controller's list may hold more than asked for
// (it matches whole arrays), so squeue picks the tasks itself.
bool Requested(const v1::JobFilter& filter, const v1::Job& job);
// The jobs of a listing. The commands here never print a job's environment, and the controller's
// records hold none (it lives in the store with the script): a plain parse of each entry.
std::vector<v1::Job> ParseJobs(const v1::JobList& list);
// Every page of the history (sacct, sreport): the controller answers at most a page of stored
// records per call and the cursor of the next.
Result<v1::JobList> ReadHistory(Connection& connection, v1::HistoryQuery query);
// The controller's accounting database (its Accounting service's Show: sacctmgr, sreport).
Result<acct::Database> FetchAccounting(const std::shared_ptr<grpc::Channel>& channel);
// Every partition; none when the controller cannot say.
// `configuration_only`: the settings alone, without the nodes' use and job counts (cheaper: the
// controller does not read the queue for them).
std::vector<v1::Partition> Partitions(Connection& connection, bool configuration_only = false);
// A running job and its nodes' agents (sstat, sbcast, sattach reach them directly). An error
// only when the controller cannot be asked; a job it does not know, or that does not run, has
// `refusal` set ("Invalid job id N", "Job N is not running: STATE") and no agents.
struct NodeAgent {
  std::string name, address;  // address empty: the node's agent has not registered
};
struct RunningJob {
  v1::Job job;
  std::string refusal;  // empty: running
  std::vector<NodeAgent> agents;
};
Result<RunningJob> FindRunningJob(Connection& connection, uint64_t job_id);
// "COMMAND: error: MESSAGE" on stderr; returns 1.
int Fail(std::string_view command, const std::string& message);
// Ends a one-shot listing that has printed everything: stdout and stderr flushed, then _exit,
// leaving the heap to the kernel. Freeing 100,000 parsed jobs one by one was a third of squeue's
// time; nothing else is left to do (lean calls hold no channel, the files are written).
[[noreturn]] void ExitNow(int code);
// The user's name, or the uid when it has none.
// A user's or group's name, the number when it has none; each looked up once per process.
std::string UserName(uint32_t uid);
std::string GroupName(uint32_t gid);

}  // namespace drover::cli
