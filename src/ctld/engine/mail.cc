// Slurm's mail_job_info: the subject ("Slurm Job_id=12 Name=x Ended, Run time 00:00:05,
// COMPLETED, ExitCode 0") and MailProg's environment (job_common_env_vars plus SLURM_JOB_STATE,
// SLURM_JOB_MAIL_TYPE and the times and exit codes the event carries).
#include "ctld/engine/mail.h"

#include <fmt/format.h>

#include <vector>

#include "common/hostlist.h"

namespace drover::ctld {
namespace {

std::string_view EventText(MailType event) {
  switch (event) {
    case kMailInvalidDepend:
      return "Invalid dependency";
    case kMailBegin:
      return "Began";
    case kMailEnd:
      return "Ended";
    case kMailFail:
      return "Failed";
    case kMailRequeue:
      return "Requeued";
    case kMailStageOut:
      return "StageOut/Teardown";
    case kMailTimeLimit:
      return "Reached time limit";
    case kMailTimeLimit90:
      return "Reached 90% of time limit";
    case kMailTimeLimit80:
      return "Reached 80% of time limit";
    case kMailTimeLimit50:
      return "Reached 50% of time limit";
    case kMailArrayTasks:
      break;
  }
  return "unknown";
}

// The state Slurm names: a requeued job is pending again, its last run ended as the history says.
std::string StateText(const Job& job) {
  if (job.state == JobState::kPending && !job.history.empty())
    return std::string(JobStateName(job.history.back().state));
  return std::string(JobStateName(job.state));
}

// Slurm prints a missing string as glibc does.
std::string OrNull(std::string text) {
  return text.empty() ? "(null)" : text;
}

std::string NodeList(const Job& job, const ClusterConfig& cluster) {
  std::vector<std::string> names;
  for (int node : job.NodeIndexes()) names.push_back(cluster.nodes[node].name);
  if (names.empty() && job.state == JobState::kPending && !job.history.empty())
    for (int node : job.history.back().nodes) names.push_back(cluster.nodes[node].name);
  return OrNull(CompressHostlist(names));
}

std::string Recipient(const Job& job, const ClusterConfig& cluster) {
  if (!job.spec.mail_user.empty()) return job.spec.mail_user;
  const std::string& domain = cluster.settings.mail_domain;
  return domain.empty() ? job.spec.user : job.spec.user + "@" + domain;
}

struct Parts {
  std::string time;  // ", Queued time 00:00:01"
  std::string term;  // ", COMPLETED, ExitCode 0"
  std::vector<std::string> environment;
};

int64_t RunSeconds(const Job& job, int64_t end) {
  return std::max<int64_t>(0, end - job.start_time - job.suspended_seconds);
}

void AddTime(const Job& job, MailType event, int64_t now, Parts& parts) {
  auto set = [&](std::string_view label, std::string_view variable, int64_t seconds) {
    std::string text = MailDuration(seconds);
    parts.time = fmt::format(", {} {}", label, text);
    parts.environment.push_back(fmt::format("{}={}", variable, text));
  };
  // A requeued job's times are its last run's.
  int64_t start = job.start_time, end = job.end_time;
  if (job.state == JobState::kPending && !job.history.empty()) {
    start = job.history.back().start_time;
    end = job.history.back().end_time;
  }
  if (event == kMailBegin && job.start_time)
    return set("Queued time", "SLURM_JOB_QUEUED_TIME", job.start_time - job.spec.submit_time);
  bool ended = event == kMailEnd || event == kMailFail || event == kMailRequeue;
  if (ended && start && end)
    return set("Run time", "SLURM_JOB_RUN_TIME", std::max<int64_t>(0, end - start));
  bool limit = event == kMailTimeLimit || event == kMailTimeLimit90 || event == kMailTimeLimit80 ||
               event == kMailTimeLimit50;
  if (limit && job.start_time) set("Run time", "SLURM_JOB_RUN_TIME", RunSeconds(job, now));
}

void AddTerm(const Job& job, MailType event, const std::optional<ArraySummary>& summary,
             Parts& parts) {
  if (event != kMailEnd && event != kMailFail) return;
  std::string state = StateText(job);
  if (summary && summary->max_signal) {
    parts.term = fmt::format(", Mixed, MaxSignal [{}]", summary->max_signal);
    parts.environment.push_back(fmt::format("SLURM_JOB_TERM_SIGNAL_MAX={}", summary->max_signal));
  } else if (summary) {
    bool mixed = summary->min_exit_code == 0 && summary->max_exit_code > 0;
    parts.term = fmt::format(", {}, ExitCode [{}-{}]", mixed ? "Mixed" : state,
                             summary->min_exit_code, summary->max_exit_code);
    parts.environment.push_back(fmt::format("SLURM_JOB_EXIT_CODE_MIN={}", summary->min_exit_code));
    parts.environment.push_back(fmt::format("SLURM_JOB_EXIT_CODE_MAX={}", summary->max_exit_code));
  } else if (job.exit_signal == 0) {
    parts.term = fmt::format(", {}, ExitCode {}", state, job.exit_code);
    parts.environment.push_back(fmt::format("SLURM_JOB_EXIT_CODE_MAX={}", job.exit_code));
  } else {
    parts.term = ", " + state;
    parts.environment.push_back("SLURM_JOB_EXIT_CODE_MAX=0");
  }
}

// job_common_env_vars: what every MailProg (and PrologSlurmctld) sees of the job.
void AddCommon(const Job& job, MailType event, const ClusterConfig& cluster, Parts& parts) {
  auto& env = parts.environment;
  const JobSpec& spec = job.spec;
  env.push_back("SLURM_JOB_ACCOUNT=" + OrNull(spec.account));
  env.push_back("SLURM_JOB_CONSTRAINTS=" + OrNull(spec.constraint));
  if (event == kMailEnd || event == kMailFail) {
    env.push_back(fmt::format("SLURM_JOB_EXIT_CODE2={}:{}", job.exit_code, job.exit_signal));
    env.push_back(fmt::format("SLURM_JOB_EXIT_CODE={}",
                              job.exit_signal ? job.exit_signal : job.exit_code << 8));
  }
  if (spec.array_job_id) {
    env.push_back(fmt::format("SLURM_ARRAY_JOB_ID={}", spec.array_job_id));
    env.push_back(fmt::format("SLURM_ARRAY_TASK_ID={}", spec.array_task_id));
  }
  if (!cluster.settings.cluster_name.empty())
    env.push_back("SLURM_CLUSTER_NAME=" + cluster.settings.cluster_name);
  env.push_back(fmt::format("SLURM_JOB_GID={}", spec.gid));
  env.push_back(fmt::format("SLURM_JOBID={}", spec.job_id));
  env.push_back(fmt::format("SLURM_JOB_ID={}", spec.job_id));
  env.push_back("SLURM_JOB_NAME=" + spec.name);
  env.push_back("SLURM_JOB_NODELIST=" + NodeList(job, cluster));
  std::string partition = job.partition >= 0        ? cluster.partitions[job.partition].name
                          : spec.partitions.empty() ? ""
                                                    : spec.partitions.front();
  env.push_back("SLURM_JOB_PARTITION=" + OrNull(partition));
  env.push_back(fmt::format("SLURM_JOB_UID={}", spec.uid));
  env.push_back("SLURM_JOB_USER=" + spec.user);
  env.push_back("SLURM_JOB_WORK_DIR=" + OrNull(spec.work_dir));
  env.push_back("SLURM_JOB_STATE=" + StateText(job));
  env.push_back(fmt::format("SLURM_JOB_MAIL_TYPE={}", EventText(event)));
}

}  // namespace

std::string MailDuration(int64_t seconds) {
  seconds = std::max<int64_t>(0, seconds);
  int64_t days = seconds / 86400;
  std::string clock =
      fmt::format("{:02}:{:02}:{:02}", seconds / 3600 % 24, seconds / 60 % 60, seconds % 60);
  return days ? fmt::format("{}-{}", days, clock) : clock;
}

MailJob BuildMail(const Job& job, MailType event, const ClusterConfig& cluster, int64_t now,
                  const std::optional<ArraySummary>& summary) {
  Parts parts;
  AddCommon(job, event, cluster, parts);
  AddTime(job, event, now, parts);
  AddTerm(job, event, summary, parts);
  const JobSpec& spec = job.spec;
  MailJob mail;
  mail.job_id = spec.job_id;
  mail.user = Recipient(job, cluster);
  if (summary)
    mail.subject =
        fmt::format("Slurm Array Summary Job_id={}_* ({}) Name={} {}{}", spec.array_job_id,
                    spec.array_job_id, spec.name, EventText(event), parts.term);
  else if (spec.array_job_id)
    mail.subject = fmt::format("Slurm Array Task Job_id={}_{} ({}) Name={} {}{}{}",
                               spec.array_job_id, spec.array_task_id, spec.job_id, spec.name,
                               EventText(event), parts.time, parts.term);
  else
    mail.subject = fmt::format("Slurm Job_id={} Name={} {}{}{}", spec.job_id, spec.name,
                               EventText(event), parts.time, parts.term);
  mail.environment = std::move(parts.environment);
  return mail;
}

}  // namespace drover::ctld
