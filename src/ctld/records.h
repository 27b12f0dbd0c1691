// Conversions between the engine's records (jobs, nodes, reservations, plans) and drover.proto's
// messages: what the store keeps and what queries return. A job's spec goes through the wire
// codec (wire/job_spec_codec.h), which the agent and the commands share.
#pragma once

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

void ToProto(const NodeStatus& node, const std::string& name, bool fully_allocated,
             v1::NodeStatus* out);
NodeStatus FromProto(const v1::NodeStatus& node);

void ToProto(const Reservation& reservation, const ClusterConfig& cluster, v1::Reservation* out);
// Errors when the reservation names a node the configuration no longer has.
Result<Reservation> FromProto(const v1::Reservation& reservation, const ClusterConfig& cluster);

// sbatch --test-only's answer; processors counts each allocated core's threads, as Slurm does.
void ToProto(const WillRun& will_run, const ClusterConfig& cluster, v1::WillRun* out);
void ToProto(const sched::PlannedStart& plan, const ClusterConfig& cluster, v1::PlannedStart* out);

}  // namespace drover::ctld
