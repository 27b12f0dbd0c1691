// job_container.conf (job_container.conf(5)), read with JobContainerType=job_container/tmpfs:
// where each job's private /tmp and /dev/shm are made (BasePath, per node or for all),
// whether BasePath is created (AutoBasePath), and which directories are private (Dirs).
#pragma once

#include <vector>

#include "common/cluster_config.h"
#include "common/conf_reader.h"
#include "common/slurm_conf.h"

namespace drover {

// Reads job_container.conf's lines into config.settings.job_container: "AutoBasePath=true
// BasePath=/var/nvme/jobs Dirs=/tmp,/dev/shm" for every node, or "NodeName=gpu[1-8]
// BasePath=/nvme" for some. Errors: a relative BasePath or Dirs entry, an unknown node.
void ApplyJobContainerConf(const std::vector<ConfLine>& lines, ClusterConfig& config,
                           Diagnostics& diagnostics, KeyReporter& reporter);

// With JobContainerType=job_container/tmpfs: an error when no node has a BasePath.
void CheckJobContainer(const ClusterConfig& config, Diagnostics& diagnostics);

}  // namespace drover
