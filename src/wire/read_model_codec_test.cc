// The read-model codecs' tests (partition, node, reservation, priority and job-listing codecs):
// each field of a read model with distinct values lands in its own field of the v1 message, read
// back from the message's bytes; a codec that forgets a field leaves it at its default, which
// the every-field check catches when drover.proto grows.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "wire/gpu_health_codec.h"
#include "wire/job_listing_codec.h"
#include "wire/node_codec.h"
#include "wire/partition_codec.h"
#include "wire/priority_codec.h"
#include "wire/reservation_codec.h"

namespace drover::wire {
namespace {

// The message as a reader gets it: through its bytes.
template <typename Message>
Message Reread(const Message& message) {
  Message out;
  EXPECT_TRUE(out.ParseFromString(message.SerializeAsString()));
  return out;
}

void ExpectEveryFieldSet(const google::protobuf::Message& message) {
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  message.GetReflection()->ListFields(message, &fields);
  EXPECT_EQ(fields.size(), static_cast<size_t>(message.GetDescriptor()->field_count()))
      << message.DebugString();
}

TEST(PartitionCodec, EveryFieldInItsPlace) {
  PartitionInfo info{
      "gpu", "DRAIN", true,      "n[1-4]", 4,      32,           8,        7200, 600,  3,  1,  2,
      5,     "YES:4", "REQUEUE", 30,       {"a1"}, {"q1", "q2"}, "normal", true, true, 11, 12, 13,
      14,    15,      16,        17};
  v1::PartitionList list;
  ToProto(std::vector<PartitionInfo>{info}, &list);
  v1::Partition out = Reread(list).partitions(0);
  ExpectEveryFieldSet(out);
  EXPECT_EQ(out.name(), "gpu");
  EXPECT_EQ(out.state(), "DRAIN");
  EXPECT_TRUE(out.is_default());
  EXPECT_EQ(out.node_list(), "n[1-4]");
  EXPECT_EQ(out.total_nodes(), 4u);
  EXPECT_EQ(out.total_cpus(), 32u);
  EXPECT_EQ(out.total_gpus(), 8u);
  EXPECT_EQ(out.max_time_seconds(), 7200);
  EXPECT_EQ(out.default_time_seconds(), 600);
  EXPECT_EQ(out.max_nodes(), 3u);
  EXPECT_EQ(out.min_nodes(), 1u);
  EXPECT_EQ(out.priority_tier(), 2u);
  EXPECT_EQ(out.priority_job_factor(), 5u);
  EXPECT_EQ(out.over_subscribe(), "YES:4");
  EXPECT_EQ(out.preempt_mode(), "REQUEUE");
  EXPECT_EQ(out.grace_time_seconds(), 30);
  EXPECT_EQ(out.allow_accounts(0), "a1");
  EXPECT_EQ(out.allow_qos_size(), 2);
  EXPECT_EQ(out.qos(), "normal");
  EXPECT_EQ(out.nodes_allocated(), 11u);
  EXPECT_EQ(out.nodes_idle(), 12u);
  EXPECT_EQ(out.nodes_other(), 13u);
  EXPECT_EQ(out.cpus_allocated(), 14u);
  EXPECT_EQ(out.gpus_allocated(), 15u);
  EXPECT_EQ(out.pending_jobs(), 16u);
  EXPECT_EQ(out.running_jobs(), 17u);
}

TEST(NodeCodec, EveryFieldInItsPlace) {
  NodeInfo info{"n7",      "DRAINING*", true,    true,   true,    true,   true,  "fan",
                1000,      7,           2000,    {4, 9}, "MAINT", 5,      "a,b", "a",
                "new fan", "rack 3",    "gpu:4", true,   3000,    "DOWN", true,  "127.0.0.1:7818"};
  NodeListing listing{42, {info}};
  v1::NodeList list;
  ToProto(listing, &list);
  list = Reread(list);
  EXPECT_EQ(list.time(), 42);
  const v1::NodeStatus& out = list.nodes(0);
  ExpectEveryFieldSet(out);
  EXPECT_EQ(out.name(), "n7");
  EXPECT_EQ(out.state(), "DRAINING*");
  EXPECT_EQ(out.reason(), "fan");
  EXPECT_EQ(out.reason_time(), 1000);
  EXPECT_EQ(out.reason_uid(), 7u);
  EXPECT_EQ(out.last_heard(), 2000);
  EXPECT_EQ(std::vector<uint64_t>(out.jobs().begin(), out.jobs().end()),
            (std::vector<uint64_t>{4, 9}));
  EXPECT_EQ(out.reservation(), "MAINT");
  EXPECT_EQ(out.weight(), 5u);
  EXPECT_EQ(out.features(), "a,b");
  EXPECT_EQ(out.active_features(), "a");
  EXPECT_EQ(out.comment(), "new fan");
  EXPECT_EQ(out.extra(), "rack 3");
  EXPECT_EQ(out.gres(), "gpu:4");
  EXPECT_TRUE(out.reboot_requested());
  EXPECT_EQ(out.boot_time(), 3000);
  EXPECT_EQ(out.next_state(), "DOWN");
  EXPECT_TRUE(out.health_latched());
  EXPECT_EQ(out.agent_address(), "127.0.0.1:7818");
}

// The heartbeat's GPU readings: every field there and back, so a field added to one side only
// fails here.
TEST(GpuHealthCodec, EveryFieldThereAndBack) {
  GpuHealth health{3, "GPU-8e6a", 2, 79, 1, 5, 3, true, 1, true, 2, 0x48, true, 71.5, "XID 79"};
  v1::GpuHealth out;
  ToProto(health, &out);
  out = Reread(out);
  ExpectEveryFieldSet(out);
  EXPECT_EQ(FromProto(out), health);
}

TEST(ReservationCodec, EveryFieldInItsPlace) {
  ReservationInfo info{"maint", 100,       200,   {"n2", "n1"}, "n[1-2]", {"-bob"},
                       {"a1"},  {"MAINT"}, "gpu", "gres/gpu=4", 3};
  v1::ReservationList list;
  ToProto(ReservationListing{9, {info}}, &list);
  list = Reread(list);
  EXPECT_EQ(list.time(), 9);
  const v1::Reservation& out = list.reservations(0);
  ExpectEveryFieldSet(out);
  EXPECT_EQ(out.name(), "maint");
  EXPECT_EQ(out.start_time(), 100);
  EXPECT_EQ(out.end_time(), 200);
  EXPECT_EQ(out.nodes(0), "n2");  // the reservation's order, not sorted
  EXPECT_EQ(out.node_list(), "n[1-2]");
  EXPECT_EQ(out.users(0), "-bob");
  EXPECT_EQ(out.accounts(0), "a1");
  EXPECT_EQ(out.flags(0), "MAINT");
  EXPECT_EQ(out.partition(), "gpu");
  EXPECT_EQ(out.tres(), "gres/gpu=4");
  EXPECT_EQ(out.created_by(), 3u);
}

TEST(PriorityCodec, EveryFieldInItsPlace) {
  JobPriorityInfo job{12,  "alice", "research",         "gpu", 900, 0.1, 0.2, 0.3, 0.4, 0.5,
                      0.6, -3,      {{"gres/gpu", 0.7}}};
  v1::PriorityList list;
  ToProto(PriorityListing{{job}, {{"age", 1000}, {"qos", 5}}}, &list);
  list = Reread(list);
  const v1::JobPriority& out = list.jobs(0);
  ExpectEveryFieldSet(out);
  EXPECT_EQ(out.job_id(), 12u);
  EXPECT_EQ(out.user(), "alice");
  EXPECT_EQ(out.account(), "research");
  EXPECT_EQ(out.partition(), "gpu");
  EXPECT_EQ(out.priority(), 900);
  EXPECT_EQ(out.age(), 0.1);
  EXPECT_EQ(out.fairshare(), 0.2);
  EXPECT_EQ(out.job_size(), 0.3);
  EXPECT_EQ(out.partition_factor(), 0.4);
  EXPECT_EQ(out.qos(), 0.5);
  EXPECT_EQ(out.assoc(), 0.6);
  EXPECT_EQ(out.nice(), -3);
  EXPECT_EQ(out.tres().at("gres/gpu"), 0.7);
  EXPECT_EQ(list.weights().at("age"), 1000u);
  EXPECT_EQ(list.weights().at("qos"), 5u);
}

TEST(PriorityCodec, SharesEveryFieldInItsPlace) {
  ShareInfo share{"research",    "alice",       "root",       4, 10.5, 0.25, 0.5, 0.75, 1.5, 0.875,
                  "gres/gpu=60", "cpu=2,mem=0", "cpu=5,mem=1"};
  v1::ShareList list;
  ToProto(std::vector<ShareInfo>{share}, &list);
  const v1::Share out = Reread(list).shares(0);
  ExpectEveryFieldSet(out);
  EXPECT_EQ(out.account(), "research");
  EXPECT_EQ(out.user(), "alice");
  EXPECT_EQ(out.parent(), "root");
  EXPECT_EQ(out.raw_shares(), 4u);
  EXPECT_EQ(out.raw_usage(), 10.5);
  EXPECT_EQ(out.norm_shares(), 0.25);
  EXPECT_EQ(out.norm_usage(), 0.5);
  EXPECT_EQ(out.effective_usage(), 0.75);
  EXPECT_EQ(out.level_fs(), 1.5);
  EXPECT_EQ(out.fairshare(), 0.875);
  EXPECT_EQ(out.grp_tres_mins(), "gres/gpu=60");
  EXPECT_EQ(out.tres_run_mins(), "cpu=2,mem=0");
  EXPECT_EQ(out.grp_tres_raw(), "cpu=5,mem=1");
}

TEST(JobListingCodec, RecordsGoAsTheyWereEncodedWithThePlan) {
  JobListing listing{77,
                     {std::make_shared<const std::string>("first"),
                      std::make_shared<const std::string>(std::string("a\0b", 3))},
                     {{5, 300, "n[1-2]", true}},
                     "0000000042",
                     9};
  v1::JobList list;
  ToProto(listing, &list);
  list = Reread(list);
  ExpectEveryFieldSet(list);
  EXPECT_EQ(list.time(), 77);
  EXPECT_EQ(list.next(), "0000000042");
  EXPECT_EQ(list.more_after(), 9u);
  ASSERT_EQ(list.jobs_size(), 2);
  EXPECT_EQ(list.jobs(0), "first");
  EXPECT_EQ(list.jobs(1), std::string("a\0b", 3));
  const v1::PlannedStart& plan = list.planned(0);
  ExpectEveryFieldSet(plan);
  EXPECT_EQ(plan.job_id(), 5u);
  EXPECT_EQ(plan.start_time(), 300);
  EXPECT_EQ(plan.node_list(), "n[1-2]");
  EXPECT_TRUE(plan.reserved());
}

TEST(JobListingCodec, WillRunAndStepLayout) {
  v1::WillRun will_run;
  ToProto(WillRunInfo{400, "n3", "cpu", 6}, &will_run);
  will_run = Reread(will_run);
  ExpectEveryFieldSet(will_run);
  EXPECT_EQ(will_run.start_time(), 400);
  EXPECT_EQ(will_run.node_list(), "n3");
  EXPECT_EQ(will_run.partition(), "cpu");
  EXPECT_EQ(will_run.processors(), 6u);

  StepLayout layout{2, {{"n1", "h:1", 1, {0, 1}}, {"n2", "h:2", 0, {2}}}, "n[1-2]", 3};
  v1::CreateStepReply reply;
  ToProto(layout, &reply);
  reply = Reread(reply);
  EXPECT_EQ(reply.step_id(), 2u);
  EXPECT_EQ(reply.ntasks(), 3u);
  EXPECT_EQ(reply.node_list(), "n[1-2]");
  EXPECT_FALSE(reply.has_job());  // the job's record is the controller's to add
  ASSERT_EQ(reply.nodes_size(), 2);
  ExpectEveryFieldSet(reply.nodes(0));
  EXPECT_EQ(reply.nodes(0).name(), "n1");
  EXPECT_EQ(reply.nodes(0).address(), "h:1");
  EXPECT_EQ(reply.nodes(0).node_index(), 1u);
  EXPECT_EQ(reply.nodes(0).tasks_size(), 2);
  EXPECT_EQ(reply.nodes(1).tasks(0), 2u);
}

}  // namespace
}  // namespace drover::wire
