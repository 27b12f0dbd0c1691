// The mail Slurm's controller sends for a --mail-type event: MailProg's subject line, recipient
// and SLURM_JOB_* environment, built from the job record alone (pure: the engine decides when
// an event happens, the daemon runs MailProg). Never looks up names or reads the clock.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/cluster_config.h"
#include "common/mail_type.h"
#include "ctld/engine/events.h"
#include "ctld/engine/job.h"

namespace drover::ctld {

// The array's tasks, for one mail about the whole array (no ARRAY_TASKS): their lowest and
// highest exit codes, and whether any ended by a signal.
struct ArraySummary {
  int32_t min_exit_code = 0, max_exit_code = 0;
  int32_t max_signal = 0;
};

// The mail for `event` (one MailType bit) about `job` at `now`; `summary` set: the mail speaks
// for the whole array ("Slurm Array Summary Job_id=N_* ...").
MailJob BuildMail(const Job& job, MailType event, const ClusterConfig& cluster, int64_t now,
                  const std::optional<ArraySummary>& summary = std::nullopt);

// "00:00:01", "1-02:03:04": Slurm's secs2time_str.
std::string MailDuration(int64_t seconds);

}  // namespace drover::ctld
