// Table tests for dependency evaluation: each type against each outcome, "+time" delays, all
// (',') and any ('?') combination, unknown jobs, aftercorr over array tasks, and singleton.
#include "sched/dependency.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

namespace drover::sched {
namespace {

using State = JobOutcome::State;
constexpr DependencyStatus kSat = DependencyStatus::kSatisfied;
constexpr DependencyStatus kWait = DependencyStatus::kWaiting;
constexpr DependencyStatus kNever = DependencyStatus::kNeverSatisfied;

class FakeOutcomes : public JobOutcomes {
 public:
  std::map<uint64_t, JobOutcome> jobs;
  std::map<std::pair<uint64_t, uint32_t>, JobOutcome> tasks;

  JobOutcome Find(uint64_t job_id) const override {
    auto it = jobs.find(job_id);
    return it == jobs.end() ? JobOutcome{} : it->second;
  }
  JobOutcome FindArrayTask(uint64_t array_job_id, uint32_t task_id) const override {
    auto it = tasks.find({array_job_id, task_id});
    return it == tasks.end() ? JobOutcome{} : it->second;
  }
};

// Jobs by id: 1 pending; 2 running since 1000; 3 completed 1000-2000; 4 failed 1000-2000;
// 5 cancelled while running 1000-2000; 6 cancelled before it started, at 1500. Array 100 has
// task 0 completed, task 1 failed, task 2 running, task 3 cancelled; its task 9 is unknown.
FakeOutcomes MakeOutcomes() {
  FakeOutcomes o;
  o.jobs[1] = {State::kPending, 0, 0};
  o.jobs[2] = {State::kRunning, 1000, 0};
  o.jobs[3] = {State::kCompleted, 1000, 2000};
  o.jobs[4] = {State::kFailed, 1000, 2000};
  o.jobs[5] = {State::kCancelled, 1000, 2000};
  o.jobs[6] = {State::kCancelled, 0, 1500};
  o.jobs[100] = {State::kRunning, 1000, 0};  // the array as a whole
  o.tasks[{100, 0}] = {State::kCompleted, 1000, 2000};
  o.tasks[{100, 1}] = {State::kFailed, 1000, 2000};
  o.tasks[{100, 2}] = {State::kRunning, 1000, 0};
  o.tasks[{100, 3}] = {State::kCancelled, 1000, 2000};
  return o;
}

struct EvalCase {
  std::string_view dependency;
  DependencyStatus expected;
  int64_t now = 10000;
  uint32_t array_task = kNoArrayTask;
  bool singleton_blocked = false;
};

TEST(SchedDependencyTest, Evaluate) {
  const EvalCase cases[] = {
      {"", kSat},

      // after: started (running or ended), or cancelled before starting.
      {"after:1", kWait},
      {"after:2", kSat},
      {"after:3", kSat},
      {"after:4", kSat},
      {"after:5", kSat},
      {"after:6", kSat},
      {"after:2", kSat, 500},  // no delay: started is enough even with a skewed clock
      {"after:2+10", kWait, 1599},
      {"after:2+10", kSat, 1600},
      {"after:6+10", kWait, 2099},  // cancelled before start: delay counts from the end
      {"after:6+10", kSat, 2100},

      // afterany: ended in any state.
      {"afterany:1", kWait},
      {"afterany:2", kWait},
      {"afterany:3", kSat},
      {"afterany:4", kSat},
      {"afterany:5", kSat},
      {"afterany:6", kSat},
      {"afterany:3+5", kWait, 2299},
      {"afterany:3+5", kSat, 2300},
      {"afterany:4+5", kSat, 2300},

      // afterok: completed; any other end can never satisfy it.
      {"afterok:1", kWait},
      {"afterok:2", kWait},
      {"afterok:3", kSat},
      {"afterok:4", kNever},
      {"afterok:5", kNever},
      {"afterok:6", kNever},
      {"afterok:3+1", kWait, 2059},
      {"afterok:3+1", kSat, 2060},
      {"afterok:4+1", kNever, 2000},  // never, even before the delay would have passed

      // afternotok: failed or cancelled; completed can never satisfy it.
      {"afternotok:1", kWait},
      {"afternotok:2", kWait},
      {"afternotok:3", kNever},
      {"afternotok:4", kSat},
      {"afternotok:5", kSat},
      {"afternotok:6", kSat},
      {"afternotok:4+2", kWait, 2119},
      {"afternotok:4+2", kSat, 2120},

      // Unknown (purged or never existed): order-only types pass, outcome types cannot.
      {"after:999", kSat},
      {"afterany:999", kSat},
      {"afterany:999+10", kSat, 0},
      {"afterok:999", kNever},
      {"afternotok:999", kNever},
      {"aftercorr:999", kNever},
      {"aftercorr:999", kNever, 10000, 0},

      // aftercorr: the task with the same index; a job that is no array task is afterok.
      {"aftercorr:100", kSat, 10000, 0},
      {"aftercorr:100", kNever, 10000, 1},
      {"aftercorr:100", kWait, 10000, 2},
      {"aftercorr:100", kNever, 10000, 3},
      {"aftercorr:100", kNever, 10000, 9},
      {"aftercorr:100", kWait},  // not an array task: the array (running) as afterok
      {"aftercorr:3", kSat},
      {"aftercorr:4", kNever},

      // N_T: one task of array 100, whatever the array as a whole is doing.
      {"afterok:100_0", kSat},
      {"afterok:100_1", kNever},
      {"afternotok:100_1", kSat},
      {"afterany:100_2", kWait},
      {"afterany:100_3", kSat},
      {"afterok:100_9", kNever},  // no such task
      {"afterany:100_9", kSat},
      {"afterok:100_0?afterok:100_2", kSat},
      {"afterok:100_0,afterok:100_2", kWait},

      // singleton.
      {"singleton", kSat},
      {"singleton", kWait, 10000, kNoArrayTask, true},

      // ',' all: any never wins, then any waiting.
      {"afterok:3:4", kNever},
      {"afterok:3,afterany:4", kSat},
      {"afterok:3,afterany:2", kWait},
      {"afterany:2,afterok:4", kNever},
      {"afterok:3,singleton", kWait, 10000, kNoArrayTask, true},
      {"afterok:3,singleton", kSat},
      {"afterok:3+10,after:2", kWait, 2500},
      {"afterok:3+10,after:2", kSat, 2600},

      // '?' any: any satisfied wins, then all never, else waiting.
      {"afterok:4?afternotok:4", kSat},
      {"afterok:4?afterok:5", kNever},
      {"afterok:4?afterok:2", kWait},
      {"afterok:2?afterok:3", kSat},
      {"afterok:4?singleton", kWait, 10000, kNoArrayTask, true},
      {"afterok:4?singleton", kSat},
      {"afterok:999?after:999", kSat},
      {"afterok:3+10?afterany:2", kWait, 2500},
  };
  const FakeOutcomes outcomes = MakeOutcomes();
  for (const EvalCase& c : cases) {
    SCOPED_TRACE(std::string(c.dependency) + " now=" + std::to_string(c.now) +
                 " task=" + std::to_string(c.array_task));
    Result<DependencySpec> spec = ParseDependency(c.dependency);
    ASSERT_TRUE(spec.ok()) << spec.error();
    JobSpec job;
    job.job_id = 500;
    job.dependency = *spec;
    if (c.array_task != kNoArrayTask) {
      job.array_job_id = 500;
      job.array_task_id = c.array_task;
    }
    EXPECT_EQ(EvaluateDependencies(job, &outcomes, c.now, c.singleton_blocked), c.expected);
  }
}

TEST(SchedDependencyTest, NullOutcomesMeansEveryJobUnknown) {
  const std::pair<std::string_view, DependencyStatus> cases[] = {
      {"", kSat},
      {"after:1", kSat},
      {"afterany:1+5", kSat},
      {"afterok:1", kNever},
      {"afternotok:1", kNever},
      {"aftercorr:1", kNever},
      {"singleton", kSat},
      {"afterok:1?afterany:2", kSat},
      {"afterok:1,afterany:2", kNever},
  };
  for (const auto& [dependency, expected] : cases) {
    SCOPED_TRACE(std::string(dependency));
    JobSpec job;
    job.dependency = *ParseDependency(dependency);
    EXPECT_EQ(EvaluateDependencies(job, nullptr, 10000, false), expected);
  }
}

TEST(SchedDependencyTest, DelayNearOverflowKeepsWaiting) {
  JobSpec job;
  job.dependency.terms = {{DependencyType::kAfterAny, 3, INT64_MAX}};
  const FakeOutcomes outcomes = MakeOutcomes();
  EXPECT_EQ(EvaluateDependencies(job, &outcomes, INT64_MAX, false), kWait);
}

}  // namespace
}  // namespace drover::sched
