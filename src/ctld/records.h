// The controller's own records in drover.proto's messages: jobs, nodes and reservations as the
// store keeps them, and their strict reading back. A job's record is also what squeue, sacct and
// the agents receive; its spec goes through the wire codec (wire/job_spec_codec.h). What only
// readers need (listings, plans, will-run answers) is built by the views and the wire codecs.
#pragma once

#include <memory>
#include <string>
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
// The "environments" table's value: NAME=value entries, each ended by a NUL.
std::string EncodeEnvironment(const std::vector<std::string>& environment);
std::vector<std::string> DecodeEnvironment(const std::string& stored);

}  // namespace drover::ctld
