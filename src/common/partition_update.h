// scontrol create|update|delete PartitionName=...: slurm.conf's partition keys applied to a
// configuration at run time, with the same parsers as the PartitionName line
// (slurm_conf_partitions.cc), so a key means the same in both. Errors are Slurm's words.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "common/cluster_config.h"
#include "common/result.h"

namespace drover {

// "Key=Value" words (PartitionName= among them is skipped) applied to partition `name`: a new
// one when `create` (an error if it exists), else the existing one (an error if it does not).
// Default=YES takes Default from the partition that had it. Nothing changes on an error.
Status ApplyPartitionSettings(ClusterConfig& config, std::string_view name,
                              std::span<const std::string> settings, bool create);

// Removes partition `name`; an error when there is none.
Status DeletePartition(ClusterConfig& config, std::string_view name);

// Whether `key` is one a partition takes (PartitionName, Nodes and the slurm.conf fields).
bool IsPartitionKey(std::string_view key);

}  // namespace drover
