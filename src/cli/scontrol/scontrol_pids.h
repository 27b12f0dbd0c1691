// scontrol listpids, pidinfo and show slurmd, the parts without gRPC: the JOBID[.STEPID]
// argument, which node of slurm.conf this host is, and Slurm 22.05's output (info_job.c,
// config_info.c).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/cluster_config.h"
#include "common/result.h"
#include "proto/drover.pb.h"

namespace drover::cli::scontrol {

// "12", "12.0", "12.batch", "12.extern"; empty or "*": every job. Slurm's "Invalid job id: X".
Result<v1::ListPidsRequest> ParsePidsTarget(const std::string& word);

// The nodes of slurm.conf this host may be: SLURMD_NODENAME's (`named`, set inside a job),
// else those whose NodeHostname (or NodeName) is `host` or its short form; else, where every
// node runs here (drover up), the nodes whose spool holds an agent's address. Empty when none.
std::vector<std::string> LocalNodes(const ClusterConfig& cluster, const std::string& host,
                                    const std::string& named);

// The header and a line per process, as Slurm's _list_pids_one_step prints them; "-" for the
// ids of processes that are not tasks.
std::string PidsText(const v1::ListPidsReply& reply);

// What listpids prints on stderr when nothing matched.
std::string NoPidsText(const v1::ListPidsRequest& request);

std::string StepIdText(uint32_t step_id);  // "0", "batch", "extern"

// "Slurm job id 12 ends at Wed Dec 02 10:00:00 2026\nslurm_get_rem_time is 3600\n" in local time.
std::string PidInfoText(uint64_t job_id, int64_t end_time, int64_t now);

// When the job ends as slurm_get_end_time tells: its end once ended; else start plus limit
// (and time suspended); an unlimited job a year after it started, as slurmctld sets it.
int64_t JobEndTime(const v1::Job& job);

// show slurmd: slurm_print_slurmd_status's lines ("Active Steps             = 12.0, 12.batch").
std::string SlurmdStatusText(const v1::AgentStatusReply& status);

}  // namespace drover::cli::scontrol
