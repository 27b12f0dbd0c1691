// `scontrol show step`: Slurm 22.05's step record (slurm_sprint_job_step_info) for each srun
// step of a running job.
#include <fmt/format.h>

#include "cli/scontrol/scontrol_format.h"
#include "common/duration.h"

namespace drover::cli::scontrol {

Record StepRecord(const v1::Job& job, const v1::Step& step) {
  const v1::JobSpec& spec = job.spec();
  std::string id = spec.array_task_id() != UINT32_MAX
                       ? fmt::format("{}_{}", spec.array_job_id(), spec.array_task_id())
                       : std::to_string(spec.job_id());
  // A step runs within its job's limit (srun -t can only lower it; Drover keeps the job's).
  int64_t limit = job.time_limit_seconds();
  std::string limit_text =
      limit == 0 || columns::IsUnlimited(limit) ? "UNLIMITED" : FormatDurationPadded(limit);
  uint32_t nodes = static_cast<uint32_t>(step.nodes_size());
  Record record;
  record.lines = {
      fmt::format("StepId={}.{} UserId={} StartTime={} TimeLimit={}", id, step.step_id(),
                  spec.uid(), columns::IsoTime(step.start_time()), limit_text),
      fmt::format("State={} Partition={} NodeList={}", step.state(), job.partition_name(),
                  step.node_list()),
      fmt::format("Nodes={} CPUs={} Tasks={} Name={} Network=(null)", nodes, step.cpus(),
                  step.ntasks(), step.name()),
      fmt::format("TRES={}", TresText(step.cpus(), 0, nodes, false, 0)),
      "ResvPorts=(null)",
      "CPUFreqReq=Default Dist=Block",
  };
  return record;
}

}  // namespace drover::cli::scontrol
