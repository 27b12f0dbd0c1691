// The controller's own records in drover.proto's messages: jobs, nodes and reservations as the
// store keeps them, and their strict reading back. A job's record is also what squeue, sacct and
// the agents receive; its spec goes through the wire codec (wire/job_spec_codec.h). What only
// readers need (listings, plans, will-run answers) is built by the views and the wire codecs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/cluster_config.h"
#include "common/result.h"
#include "ctld/engine/engine.h"
#include "ctld/engine/job.h"
#include "proto/drover.pb.h"
#include "wire/job_spec_codec.h"

namespace drover::ctld {

// `cluster` names the partition and nodes (partition_name, node_list) for readers.
void ToProto(const Job& job, const ClusterConfig& cluster, v1::Job* out);
// Errors when the record names a state, partition or node the configuration does not have
// (a store written under another configuration).
Result<Job> FromProto(const v1::Job& job, const ClusterConfig& cluster);

// The stored node record (its state as if no job held it: the state is derived again on reading).
void ToProto(const NodeStatus& node, const std::string& name, v1::NodeStatus* out);
NodeStatus FromProto(const v1::NodeStatus& node);

void ToProto(const Reservation& reservation, const ClusterConfig& cluster, v1::Reservation* out);
// Errors when the reservation names a node the configuration no longer has.
Result<Reservation> FromProto(const v1::Reservation& reservation, const ClusterConfig& cluster);

// The job's record, encoded: EncodeJob afresh under `cluster`; CachedJob reuses the encoding the
// engine loop made for the store when the record has one.
std::shared_ptr<const std::string> EncodeJob(const Job& job, const ClusterConfig& cluster);
std::shared_ptr<const std::string> CachedJob(const Job& job, const ClusterConfig& cluster);

// A job's key in the store's tables: its ID, zero-padded so that keys sort as IDs do.
std::string JobKey(uint64_t id);
// The history_index keys of a job in job_history, each with an empty value, all decimal and
// zero-padded so that they sort as the numbers do:
//   a/GROUP/ID     GROUP: the array's ID for an array task, else the job's own (sacct -j)
//   u/UID/END/ID   the owner's jobs by end time (sacct's own jobs, -u)
//   t/END/ID       every job by end time (sacct -a, sreport)
// END is the end time (kHistoryNoEnd when the record has none). The ID is the key's last 20
// characters.
inline constexpr int64_t kHistoryNoEnd = 999'999'999'999;
std::vector<std::string> HistoryIndexKeys(uint64_t job_id, uint64_t array_job_id, uint32_t uid,
                                          int64_t end_time);
std::string HistoryGroupPrefix(uint64_t group);                    // "a/GROUP/"
std::string HistoryUserPrefix(uint32_t uid);                       // "u/UID/"
std::string HistoryTimeKey(std::string prefix, int64_t end_time);  // prefix + "END"
inline constexpr std::string_view kHistoryTimePrefix = "t/";
// The ID at the end of an index key; 0 when the key is not one.
uint64_t HistoryIndexJobId(std::string_view key);

// The "environments" table's value: NAME=value entries, each ended by a NUL.
std::string EncodeEnvironment(const std::vector<std::string>& environment);
std::vector<std::string> DecodeEnvironment(const std::string& stored);

}  // namespace drover::ctld
