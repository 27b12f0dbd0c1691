// See partition_codec.h.
#include "wire/partition_codec.h"

namespace drover::wire {

void ToProto(const PartitionInfo& partition, v1::Partition* out) {
  out->set_name(partition.name);
  out->set_state(partition.state);
  out->set_is_default(partition.is_default);
  out->set_node_list(partition.node_list);
  out->set_total_nodes(partition.total_nodes);
  out->set_total_cpus(partition.total_cpus);
  out->set_total_gpus(partition.total_gpus);
  out->set_max_time_seconds(partition.max_time_seconds);
  out->set_default_time_seconds(partition.default_time_seconds);
  out->set_max_nodes(partition.max_nodes);
  out->set_min_nodes(partition.min_nodes);
  out->set_priority_tier(partition.priority_tier);
  out->set_priority_job_factor(partition.priority_job_factor);
  out->set_over_subscribe(partition.over_subscribe);
  out->set_preempt_mode(partition.preempt_mode);
  out->set_grace_time_seconds(partition.grace_time_seconds);
  for (const std::string& account : partition.allow_accounts) out->add_allow_accounts(account);
  for (const std::string& qos : partition.allow_qos) out->add_allow_qos(qos);
  out->set_qos(partition.qos);
  out->set_hidden(partition.hidden);
  out->set_root_only(partition.root_only);
  out->set_nodes_allocated(partition.nodes_allocated);
  out->set_nodes_idle(partition.nodes_idle);
  out->set_nodes_other(partition.nodes_other);
  out->set_cpus_allocated(partition.cpus_allocated);
  out->set_gpus_allocated(partition.gpus_allocated);
  out->set_pending_jobs(partition.pending_jobs);
  out->set_running_jobs(partition.running_jobs);
}

void ToProto(const std::vector<PartitionInfo>& partitions, v1::PartitionList* out) {
  for (const PartitionInfo& partition : partitions) ToProto(partition, out->add_partitions());
}

}  // namespace drover::wire
