// A job parsed without its environment keeps every other field, nested ones included.
#include "cli/job_listing.h"

#include <gtest/gtest.h>

namespace drover::cli {
namespace {

v1::Job Sample() {
  v1::Job job;
  job.set_state("PENDING");
  job.set_reason("Resources");
  job.set_start_time(1795965055);
  job.set_cpu_seconds(1.5);
  job.add_allocation()->set_node(3);
  v1::JobSpec& spec = *job.mutable_spec();
  spec.set_job_id(12);
  spec.set_name("train");
  spec.set_user("alice");
  for (int i = 0; i < 50; ++i) spec.add_environment("VARIABLE_" + std::to_string(i) + "=value");
  spec.add_partitions("gpu");
  return job;
}

TEST(JobListing, DropsTheEnvironmentOnly) {
  v1::Job job = Sample();
  v1::Job parsed;
  ASSERT_TRUE(ParseJobWithoutEnvironment(job.SerializeAsString(), &parsed));
  EXPECT_EQ(parsed.spec().environment_size(), 0);
  job.mutable_spec()->clear_environment();
  EXPECT_EQ(parsed.SerializeAsString(), job.SerializeAsString());
}

TEST(JobListing, ListParsesEveryEntry) {
  v1::JobList list;
  list.add_jobs(Sample().SerializeAsString());
  list.add_jobs(v1::Job().SerializeAsString());
  std::vector<v1::Job> jobs = ParseJobsWithoutEnvironment(list);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].spec().name(), "train");
  EXPECT_EQ(jobs[0].allocation(0).node(), 3);
  EXPECT_TRUE(jobs[1].spec().name().empty());
}

TEST(JobListing, MalformedBytesFallBackToTheParser) {
  v1::Job parsed;
  EXPECT_FALSE(ParseJobWithoutEnvironment(std::string("\x0a\xff", 2), &parsed));
}

}  // namespace
}  // namespace drover::cli
