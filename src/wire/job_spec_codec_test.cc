// The wire codec's tests: every JobSpec field survives spec -> proto -> bytes -> proto -> spec,
// and damaged or hostile messages are refused with a message that names what is wrong.
#include "wire/job_spec_codec.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/job_state.h"
#include "testing/full_job_spec.h"

namespace drover::wire {
namespace {

using testing::FullSpec;

std::string Bytes(const JobSpec& spec) {
  v1::JobSpec proto;
  ToProto(spec, &proto);
  return proto.SerializeAsString();
}

TEST(JobSpecCodec, JobSpecRoundTrip) {
  const std::string bytes = Bytes(FullSpec());
  v1::JobSpec parsed;
  ASSERT_TRUE(parsed.ParseFromString(bytes));
  Result<JobSpec> back = FromProto(parsed);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(Bytes(*back), bytes);

  const JobSpec& s = *back;
  EXPECT_EQ(s.job_id, 12u);
  EXPECT_EQ(s.array_task_id, 2u);
  EXPECT_EQ(s.partitions, (std::vector<std::string>{"p", "q"}));
  EXPECT_EQ(s.mem_per_gpu_mb, 200u);
  EXPECT_EQ(s.other_gres, FullSpec().other_gres);
  EXPECT_EQ(s.exclude, (std::vector<std::string>{"n2", "n3"}));
  EXPECT_EQ(s.dependency, FullSpec().dependency);
  EXPECT_EQ(s.hold, HoldKind::kAdmin);
  EXPECT_EQ(s.nice, -5);
  EXPECT_EQ(s.switch_wait_seconds, 120);
  EXPECT_EQ(s.signal_number, 10);
  EXPECT_TRUE(s.signal_batch_only);
  EXPECT_FALSE(s.requeue);
  EXPECT_EQ(s.array_max_running, 5u);
  EXPECT_EQ(s.work_dir, "/home/alice/proj");
  EXPECT_EQ(s.stdout_path, "slurm-%j.out");
  EXPECT_EQ(s.environment, FullSpec().environment);
  EXPECT_EQ(s.script_args, FullSpec().script_args);
  EXPECT_EQ(s.comment, "sweep 3");
  EXPECT_EQ(s.min_tmp_disk_mb, 1024u);
  EXPECT_EQ(s.min_threads_per_core, 2u);
  EXPECT_TRUE(s.overcommit);
  EXPECT_EQ(s.priority, 77u);
  EXPECT_TRUE(s.contiguous);
  EXPECT_EQ(s.prefer, "a100");
  EXPECT_TRUE(s.spread_job);
  EXPECT_TRUE(s.oversubscribe);
  EXPECT_EQ(s.licenses, "fluent:2,matlab");
  EXPECT_EQ(s.batch_features, "login");
  EXPECT_EQ(s.core_spec, std::optional<uint32_t>(2));
  EXPECT_EQ(s.thread_spec, std::optional<uint32_t>(0));
  EXPECT_EQ(s.gres_flags, "enforce-binding");
  EXPECT_EQ(s.deadline, 1'700'090'000);
  EXPECT_EQ(s.kill_on_invalid_dep, 1);
  EXPECT_TRUE(s.no_kill);
  EXPECT_EQ(s.mail_type, "BEGIN,END");
  EXPECT_EQ(s.mail_user, "alice@example.org");
  EXPECT_EQ(s.rlimits, FullSpec().rlimits);
  EXPECT_EQ(s.get_user_env, "60L");
  EXPECT_EQ(s.admin_comment, "checked by ops");
  EXPECT_EQ(s.site_factor, -40);
  EXPECT_EQ(s.dependency.terms.back().array_task_id, 3u);
  EXPECT_EQ(s.dependency.terms.front().array_task_id, UINT32_MAX);
}

TEST(JobSpecCodec, UnsetSpecCountsStayUnset) {
  v1::JobSpec proto;
  ToProto(JobSpec{}, &proto);
  EXPECT_FALSE(proto.has_core_spec());
  Result<JobSpec> back = FromProto(proto);
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->core_spec.has_value());
  EXPECT_FALSE(back->thread_spec.has_value());
}

TEST(JobSpecCodec, NoArrayTaskIsAllOnes) {
  v1::JobSpec proto;
  ToProto(JobSpec{}, &proto);
  EXPECT_EQ(proto.array_task_id(), 4294967295u);
  EXPECT_EQ(FromProto(proto)->array_task_id, kNoArrayTask);
}

TEST(JobSpecCodec, JobSpecShapeRefused) {
  v1::JobSpec proto;
  ToProto(FullSpec(), &proto);
  proto.set_min_nodes(0);
  EXPECT_EQ(FromProto(proto).error(), "job 12: min_nodes is 0 in the store");
  proto.set_min_nodes(1);
  proto.set_ntasks(0);
  EXPECT_EQ(FromProto(proto).error(), "job 12: ntasks is 0 in the store");
}

TEST(JobSpecCodec, ScriptArgumentWithANulIsRefused) {
  v1::JobSpec proto;
  ToProto(FullSpec(), &proto);
  proto.set_script_args(1, std::string("a\0b", 3));
  EXPECT_EQ(FromProto(proto).error(), "script argument 2 contains a NUL character");
}

TEST(JobState, EveryNameReadsBack) {
  for (int i = 0; i <= static_cast<int>(JobState::kRequeued); ++i) {
    const auto state = static_cast<JobState>(i);
    EXPECT_EQ(ParseJobState(JobStateName(state)), state) << JobStateName(state);
  }
  EXPECT_EQ(ParseJobState("OUT_OF_MEMORY"), JobState::kOutOfMemory);
  EXPECT_EQ(ParseJobState("pending"), std::nullopt);
  EXPECT_EQ(ParseJobState(""), std::nullopt);
}

}  // namespace
}  // namespace drover::wire
