// sbatch's option values as the JobSpec holds them, with Slurm's error text for bad ones: names
// and files, the job's shape, memory and GPUs, time limits and dates, scheduling controls.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <csignal>

#include "common/duration.h"

#include "cli/sbatch/sbatch_test_fixture.h"

namespace drover::cli {
namespace {

// ---------------------------------------------------------------------------------------------
// Identity, files and places

TEST_F(Sbatch, NamesAccountsAndPartitions) {
  SbatchRequest r = Ok({"-J", "train", "-A", "ml", "-q", "normal", "-p", "a,b,,c",
                        "--reservation=maint", "--comment", "note", "job.sh"});
  EXPECT_EQ(r.spec.name, "train");
  EXPECT_EQ(r.spec.account, "ml");
  EXPECT_EQ(r.spec.qos, "normal");
  EXPECT_EQ(r.spec.partitions, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(r.spec.reservation, "maint");
  EXPECT_EQ(r.spec.comment, "note");
  r = Ok({"--job-name=x", "--account=y", "--qos=z", "--partition=p", "job.sh"});
  EXPECT_EQ(r.spec.name + r.spec.account + r.spec.qos + r.spec.partitions[0], "xyzp");
}

TEST_F(Sbatch, OutputErrorAndInputKeepTheirPatterns) {
  SbatchRequest r = Ok({"-o", "out-%j.log", "-e", "err-%A_%a.log", "-i", "in.txt", "job.sh"});
  EXPECT_EQ(r.spec.stdout_path, "out-%j.log");
  EXPECT_EQ(r.spec.stderr_path, "err-%A_%a.log");
  EXPECT_EQ(r.spec.stdin_path, "in.txt");
  r = Ok({"--output=none", "--error=NONE", "--input=none", "job.sh"});
  EXPECT_EQ(r.spec.stdout_path, "/dev/null");
  EXPECT_EQ(r.spec.stderr_path, "/dev/null");
  EXPECT_EQ(r.spec.stdin_path, "/dev/null");
}

TEST_F(Sbatch, ChdirIsMadeAbsolute) {
  EXPECT_EQ(Ok({"-D", "/scratch/run", "job.sh"}).spec.work_dir, "/scratch/run");
  EXPECT_EQ(Ok({"--chdir=sub", "job.sh"}).spec.work_dir, "/home/alice/work/sub");
}

// ---------------------------------------------------------------------------------------------
// Shape: nodes, tasks, CPUs

TEST_F(Sbatch, NodeCounts) {
  struct Case {
    const char* text;
    uint32_t min, max;
  };
  for (const Case& c :
       std::vector<Case>{{"3", 3, 3}, {"2-4", 2, 4}, {"2-", 2, 0}, {"1k", 1024, 1024}}) {
    SbatchRequest r = Ok({"-N", c.text, "job.sh"});
    EXPECT_EQ(r.spec.min_nodes, c.min) << c.text;
    EXPECT_EQ(r.spec.max_nodes, c.max) << c.text;
  }
  EXPECT_EQ(Ok({"--nodes=5", "job.sh"}).spec.min_nodes, 5u);
}

TEST_F(Sbatch, BadNodeCountsAreSlurmsErrors) {
  EXPECT_EQ(Fails({"-N", "0", "job.sh"}), "sbatch: error: invalid number of nodes (-N 0)");
  EXPECT_EQ(Fails({"-N", "x", "job.sh"}), "sbatch: error: \"x\" is not a valid node count");
  EXPECT_EQ(Fails({"-N", "4-2", "job.sh"}),
            "sbatch: error: Maximum node count 2 is less than minimum node count 4");
}

TEST_F(Sbatch, TaskAndCpuCounts) {
  SbatchRequest r = Ok({"-n", "8", "-c", "4", "job.sh"});
  EXPECT_EQ(r.spec.ntasks, 8u);
  EXPECT_EQ(r.spec.cpus_per_task, 4u);
  r = Ok({"--ntasks=3", "--cpus-per-task=2", "job.sh"});
  EXPECT_EQ(r.spec.ntasks, 3u);
  EXPECT_EQ(r.spec.cpus_per_task, 2u);
}

TEST_F(Sbatch, BadCountsAreSlurmsErrors) {
  EXPECT_EQ(Fails({"-n", "x", "job.sh"}),
            "sbatch: error: Invalid numeric value \"x\" for --ntasks.");
  EXPECT_EQ(Fails({"-n", "0", "job.sh"}),
            "sbatch: error: Invalid numeric value \"0\" for --ntasks.");
  EXPECT_EQ(Fails({"-c", "-2", "job.sh"}),
            "sbatch: error: Invalid numeric value \"-2\" for --cpus-per-task.");
  EXPECT_EQ(Fails({"--ntasks-per-node=9999999999", "job.sh"}),
            "sbatch: error: Numeric argument (9999999999) to big for --ntasks-per-node.");
}

TEST_F(Sbatch, TasksPerNodeGivesTheTaskCountWhenNIsNotGiven) {
  SbatchRequest r = Ok({"--ntasks-per-node=4", "-N", "2", "job.sh"});
  EXPECT_EQ(r.spec.ntasks, 8u);
  EXPECT_EQ(r.spec.ntasks_per_node, 4u);
  r = Ok({"--ntasks-per-node=4", "-N", "2", "-n", "6", "job.sh"});
  EXPECT_EQ(r.spec.ntasks, 6u);
}

TEST_F(Sbatch, FewerTasksThanNodesLowersTheNodeCount) {
  SbatchRequest r = Ok({"-N", "4", "-n", "2", "job.sh"});
  EXPECT_EQ(r.spec.min_nodes, 2u);
  EXPECT_EQ(r.spec.max_nodes, 2u);
  EXPECT_EQ(r.notices,
            std::vector<std::string>{
                "sbatch: Warning: can't run 2 processes on 4 nodes, setting nnodes to 2"});
  r = Ok({"-N", "2-8", "-n", "4", "job.sh"});
  EXPECT_EQ(r.spec.min_nodes, 2u);
  EXPECT_EQ(r.spec.max_nodes, 4u);
}

TEST_F(Sbatch, NodeListAndExcludeAreExpanded) {
  SbatchRequest r = Ok({"-w", "n[1-3],n2", "-x", "n[7-8]", "job.sh"});
  EXPECT_EQ(r.spec.nodelist, (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_EQ(r.spec.exclude, (std::vector<std::string>{"n7", "n8"}));
  EXPECT_EQ(r.spec.min_nodes, 3u);  // the job holds every listed node
  EXPECT_EQ(Ok({"--exclude=m[1-2]", "job.sh"}).spec.exclude,
            (std::vector<std::string>{"m1", "m2"}));
  r = Ok({"--nodelist=n1", "-N", "2", "job.sh"});
  EXPECT_EQ(r.spec.min_nodes, 2u);
  EXPECT_EQ(
      Fails({"-w", "n[1-", "job.sh"}).rfind("sbatch: error: Invalid --nodelist specification: ", 0),
      0u);
}

TEST_F(Sbatch, NodeListWithASlashIsAHostFile) {
  files["/home/alice/work/hosts"] = "n1 n2\n# spare\nn3,n4\n";
  files["/home/alice/work/./hosts"] = files["/home/alice/work/hosts"];
  EXPECT_EQ(Ok({"-w", "./hosts", "job.sh"}).spec.nodelist,
            (std::vector<std::string>{"n1", "n2", "n3", "n4"}));
  EXPECT_EQ(Ok({"-F", "hosts", "job.sh"}).spec.nodelist.size(), 4u);
  EXPECT_EQ(Fails({"-w", "/none/hosts", "job.sh"}),
            "sbatch: error: Unable to read --nodelist file /none/hosts: No such file or "
            "directory");
}

TEST_F(Sbatch, ConstraintAndExclusive) {
  SbatchRequest r = Ok({"-C", "intel&ib", "--exclusive", "job.sh"});
  EXPECT_EQ(r.spec.constraint, "intel&ib");
  EXPECT_TRUE(r.spec.exclusive);
  EXPECT_EQ(Ok({"--constraint=a|b", "job.sh"}).spec.constraint, "a|b");
  EXPECT_FALSE(Ok({"--exclusive=oversubscribe", "job.sh"}).spec.exclusive);
  r = Ok({"--exclusive=user", "job.sh"});
  EXPECT_TRUE(r.spec.exclusive);
  EXPECT_EQ(r.notices,
            std::vector<std::string>{
                "sbatch: warning: --exclusive=user is treated as --exclusive in Drover"});
  EXPECT_EQ(Fails({"--exclusive=bogus", "job.sh"}),
            "sbatch: error: Invalid --exclusive specification");
  EXPECT_EQ(Fails({"--exclusive", "-s", "job.sh"}),
            "sbatch: fatal: --exclusive and --oversubscribe options are mutually exclusive");
  EXPECT_TRUE(Ok({"-s", "job.sh"}).spec.oversubscribe);
  EXPECT_TRUE(Ok({"-s", "job.sh"}).notices.empty());  // the partition's OverSubscribe decides
  EXPECT_FALSE(Ok({"job.sh"}).spec.oversubscribe);
  Script("#SBATCH --exclusive");
  r = Ok({"--oversubscribe", "job.sh"});
  EXPECT_FALSE(r.spec.exclusive);
  EXPECT_TRUE(r.spec.oversubscribe);
  Script("#SBATCH --oversubscribe");
  r = Ok({"--exclusive", "job.sh"});
  EXPECT_TRUE(r.spec.exclusive);
  EXPECT_FALSE(r.spec.oversubscribe);
}

// ---------------------------------------------------------------------------------------------
// Memory and GPUs

TEST_F(Sbatch, MemorySizes) {
  struct Case {
    const char* text;
    uint64_t megabytes;
  };
  for (const Case& c : std::vector<Case>{{"512", 512},
                                         {"512M", 512},
                                         {"16G", 16384},
                                         {"16GB", 16384},
                                         {"2048K", 2},
                                         {"1T", 1048576},
                                         {"3MB", 3}}) {
    EXPECT_EQ(Ok({"--mem", c.text, "job.sh"}).spec.mem_per_node_mb, c.megabytes) << c.text;
  }
  EXPECT_EQ(Ok({"--mem-per-cpu=2G", "job.sh"}).spec.mem_per_cpu_mb, 2048u);
  EXPECT_EQ(Ok({"--mem-per-gpu=40G", "job.sh"}).spec.mem_per_gpu_mb, 40960u);
}

TEST_F(Sbatch, BadMemoryIsSlurmsError) {
  EXPECT_EQ(Fails({"--mem=lots", "job.sh"}), "sbatch: error: Invalid --mem specification");
  EXPECT_EQ(Fails({"--mem-per-cpu=1X", "job.sh"}),
            "sbatch: error: Invalid --mem-per-cpu specification");
}

TEST_F(Sbatch, MemoryOptionsExcludeEachOtherButALaterSourceWins) {
  EXPECT_EQ(Fails({"--mem=1G", "--mem-per-cpu=1G", "job.sh"}),
            "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.");
  Script("#SBATCH --mem=8G");
  SbatchRequest r = Ok({"--mem-per-cpu=1G", "job.sh"});
  EXPECT_EQ(r.spec.mem_per_cpu_mb, 1024u);
  EXPECT_EQ(r.spec.mem_per_node_mb, 0u);
  environment["SBATCH_MEM_PER_CPU"] = "1G";
  environment["SBATCH_MEM_PER_GPU"] = "1G";
  EXPECT_EQ(Fails({"job.sh"}),
            "sbatch: fatal: SBATCH_MEM_PER_CPU, SBATCH_MEM_PER_GPU, and SBATCH_MEM_PER_NODE are "
            "mutually exclusive.");
}

TEST_F(Sbatch, ZeroMemoryIsNotSupportedAndSaysSo) {
  SbatchRequest r = Ok({"--mem=0", "job.sh"});
  EXPECT_EQ(r.spec.mem_per_node_mb, 0u);
  EXPECT_EQ(r.notices.size(), 1u);
  EXPECT_NE(r.notices[0].find("--mem=0"), std::string::npos);
}

TEST_F(Sbatch, GresGpuIsPerNodeAndOtherGresIsKept) {
  SbatchRequest r = Ok({"--gres=gpu:2", "job.sh"});
  EXPECT_EQ(r.spec.gpus_per_node, 2u);
  EXPECT_EQ(r.spec.gpu_type, "");
  r = Ok({"--gres", "gpu:a100:4,nic:1", "job.sh"});
  EXPECT_EQ(r.spec.gpus_per_node, 4u);
  EXPECT_EQ(r.spec.gpu_type, "a100");
  ASSERT_EQ(r.spec.other_gres.size(), 1u);
  EXPECT_EQ(r.spec.other_gres[0].name, "nic");
  EXPECT_EQ(r.spec.other_gres[0].count, 1u);
  EXPECT_EQ(Ok({"--gres=gres/gpu:1", "job.sh"}).spec.gpus_per_node, 1u);
  Script("#SBATCH --gres=gpu:2");
  EXPECT_EQ(Ok({"--gres=none", "job.sh"}).spec.gpus_per_node, 0u);
}

TEST_F(Sbatch, BadGresIsAnError) {
  EXPECT_EQ(Fails({"--gres=gpu:h100:x", "job.sh"})
                .rfind("sbatch: error: Invalid generic resource (gres) specification: ", 0),
            0u);
  EXPECT_EQ(Fails({"--gres=gpu:a100:1,gpu:v100:1", "job.sh"}),
            "sbatch: error: --gres names gpu more than once; Drover gives a job one GPU type");
}

TEST_F(Sbatch, GpuOptions) {
  SbatchRequest r =
      Ok({"-G", "4", "--gpus-per-node=2", "--gpus-per-task=1", "--cpus-per-gpu=8", "job.sh"});
  EXPECT_EQ(r.spec.gpus, 4u);
  EXPECT_EQ(r.spec.gpus_per_node, 2u);
  EXPECT_EQ(r.spec.gpus_per_task, 1u);
  EXPECT_EQ(r.spec.cpus_per_gpu, 8u);
  r = Ok({"--gpus=a100:8", "--gpus-per-node=a100:4", "job.sh"});
  EXPECT_EQ(r.spec.gpus, 8u);
  EXPECT_EQ(r.spec.gpu_type, "a100");
}

TEST_F(Sbatch, GpuConflictsAreErrors) {
  EXPECT_EQ(Fails({"--gpus=a100:8", "--gpus-per-task=h100:1", "job.sh"}),
            "sbatch: error: conflicting GPU types 'a100' and 'h100'; Drover gives a job one type");
  EXPECT_EQ(Fails({"--gres=gpu:2", "--gpus-per-node=4", "job.sh"}),
            "sbatch: error: --gres=gpu and --gpus-per-node disagree on the GPUs per node; give "
            "one");
  EXPECT_EQ(Fails({"--gpus=x", "job.sh"}),
            "sbatch: error: Invalid --gpus specification 'x' (expected [type:]count, e.g. 4 or "
            "a100:4)");
}

TEST_F(Sbatch, CpusPerTaskAndCpusPerGpuExcludeEachOther) {
  EXPECT_EQ(Fails({"-c", "2", "--cpus-per-gpu=4", "job.sh"}),
            "sbatch: fatal: --cpus-per-task, --tres-per-task=cpu:#, and --cpus-per-gpu are "
            "mutually exclusive");
  environment["SBATCH_CPUS_PER_GPU"] = "4";
  SbatchRequest r = Ok({"-c", "2", "job.sh"});
  EXPECT_EQ(r.spec.cpus_per_task, 2u);
  EXPECT_EQ(r.spec.cpus_per_gpu, 0u);
}

// ---------------------------------------------------------------------------------------------
// Time

TEST_F(Sbatch, TimeLimitFormatsInWholeMinutesRoundedUp) {
  struct Case {
    const char* text;
    int64_t seconds;
  };
  for (const Case& c : std::vector<Case>{{"90", 5400},
                                         {"1:30", 120},
                                         {"1:00:00", 3600},
                                         {"2-0", 172800},
                                         {"2-12:30", 2 * 86400 + 12 * 3600 + 1800},
                                         {"1-00:00:30", 86400 + 60},
                                         {"UNLIMITED", kUnlimitedSeconds},
                                         {"infinite", kUnlimitedSeconds},
                                         {"0", kUnlimitedSeconds},
                                         {"-1", kUnlimitedSeconds}}) {
    EXPECT_EQ(Ok({"-t", c.text, "job.sh"}).spec.time_limit_seconds, c.seconds) << c.text;
  }
  EXPECT_EQ(Ok({"--time-min=30", "--time=1:00:00", "job.sh"}).spec.time_min_seconds, 1800);
}

TEST_F(Sbatch, BadTimeIsSlurmsError) {
  EXPECT_EQ(Fails({"--time=1:2:3:4", "job.sh"}), "sbatch: error: Invalid --time specification");
  EXPECT_EQ(Fails({"--time-min=x", "job.sh"}), "sbatch: error: Invalid --time-min specification");
}

TEST_F(Sbatch, BeginTimes) {
  EXPECT_EQ(Ok({"--begin=now+60", "job.sh"}).spec.begin_time, kNow + 60);
  EXPECT_EQ(Ok({"-b", "now+1hour", "job.sh"}).spec.begin_time, kNow + 3600);
  EXPECT_EQ(Ok({"--begin=2030-01-20T12:34:00", "job.sh"}).spec.begin_time, 1895142840);
  EXPECT_EQ(Ok({"--begin=16:00", "job.sh"}).spec.begin_time, 1700064000);  // tomorrow
  EXPECT_EQ(Fails({"--begin=soon", "job.sh"}), "sbatch: error: Invalid --begin specification");
}

TEST_F(Sbatch, DeadlineReachesTheJob) {
  SbatchRequest r = Ok({"--deadline=now+2hours", "job.sh"});
  EXPECT_TRUE(r.notices.empty());
  EXPECT_EQ(r.spec.deadline, kNow + 7200);
  EXPECT_EQ(Ok({"job.sh"}).spec.deadline, 0);
  EXPECT_EQ(Fails({"--deadline=never", "job.sh"}),
            "sbatch: error: Invalid --deadline specification");
  EXPECT_EQ(Fails({"--begin=now+2hours", "--deadline=now+1hour", "job.sh"}),
            "sbatch: error: Incompatible begin and deadline time specification");
}

// ---------------------------------------------------------------------------------------------
// Scheduling and control

TEST_F(Sbatch, ArrayIsPassedAsGiven) {
  EXPECT_EQ(Ok({"-a", "0-15%4", "job.sh"}).array, "0-15%4");
  EXPECT_EQ(Ok({"--array=1,3,5", "job.sh"}).array, "1,3,5");
}

TEST_F(Sbatch, Dependencies) {
  SbatchRequest r = Ok({"-d", "afterok:12:13", "job.sh"});
  ASSERT_EQ(r.spec.dependency.terms.size(), 2u);
  EXPECT_EQ(r.spec.dependency.terms[0].type, DependencyType::kAfterOk);
  EXPECT_EQ(r.spec.dependency.terms[1].job_id, 13u);
  r = Ok({"--dependency=singleton", "job.sh"});
  EXPECT_EQ(r.spec.dependency.terms[0].type, DependencyType::kSingleton);
  EXPECT_EQ(Fails({"-d", "afterok:x", "job.sh"}),
            "sbatch: error: invalid dependency 'afterok:x' (expected "
            "TYPE:JOBID[:JOBID...][+MINUTES], e.g. afterok:123, or singleton)");
}

TEST_F(Sbatch, HoldAndNice) {
  SbatchRequest r = Ok({"-H", "--nice=-5", "job.sh"});
  EXPECT_EQ(r.spec.hold, HoldKind::kUser);
  EXPECT_TRUE(r.hold);
  EXPECT_EQ(r.spec.nice, -5);
  EXPECT_EQ(Ok({"--hold", "--nice", "job.sh"}).spec.nice, 100);
  EXPECT_EQ(Fails({"--nice=3000000000", "job.sh"}),
            "sbatch: error: Invalid --nice value, out of range (+/- 2147483645)");
  EXPECT_EQ(Fails({"--nice=lots", "job.sh"}),
            "sbatch: error: Invalid --nice value \"lots\" (expected an integer)");
}

TEST_F(Sbatch, Signals) {
  SbatchRequest r = Ok({"--signal=USR1", "job.sh"});
  EXPECT_EQ(r.spec.signal_number, SIGUSR1);
  EXPECT_EQ(r.spec.signal_seconds, 60);
  EXPECT_FALSE(r.spec.signal_batch_only);
  r = Ok({"--signal=B:SIGTERM@120", "job.sh"});
  EXPECT_EQ(r.spec.signal_number, SIGTERM);
  EXPECT_EQ(r.spec.signal_seconds, 120);
  EXPECT_TRUE(r.spec.signal_batch_only);
  r = Ok({"--signal=10@30", "job.sh"});
  EXPECT_EQ(r.spec.signal_number, 10);
  EXPECT_EQ(r.spec.signal_seconds, 30);
  for (const char* bad : {"--signal=BOGUS", "--signal=USR1@x", "--signal=0", "--signal=X:USR1"})
    EXPECT_EQ(Fails({bad, "job.sh"}), "sbatch: error: Invalid --signal specification") << bad;
}

TEST_F(Sbatch, Requeue) {
  EXPECT_FALSE(Ok({"--no-requeue", "job.sh"}).spec.requeue);
  EXPECT_TRUE(Ok({"--no-requeue", "--requeue", "job.sh"}).spec.requeue);
}

TEST_F(Sbatch, SwitchesAndSegment) {
  SbatchRequest r = Ok({"--switches=2@10:00", "--segment=4", "job.sh"});
  EXPECT_EQ(r.spec.switches, 2u);
  EXPECT_EQ(r.spec.switch_wait_seconds, 600);
  EXPECT_EQ(r.spec.segment, 4u);
  EXPECT_EQ(Ok({"--switches=1", "job.sh"}).spec.switch_wait_seconds, -1);
  EXPECT_EQ(Fails({"--switches=2@x", "job.sh"}), "sbatch: error: Invalid --switches specification");
  EXPECT_EQ(Fails({"--segment=-1", "job.sh"}), "sbatch: error: Invalid --segment specification");
}

TEST_F(Sbatch, SubmissionFlags) {
  SbatchRequest r = Ok({"--parsable", "--test-only", "-W", "-Q", "job.sh"});
  EXPECT_TRUE(r.parsable && r.test_only && r.wait && r.quiet);
  r = Ok({"--wait", "--quiet", "job.sh"});
  EXPECT_TRUE(r.wait && r.quiet);
  EXPECT_EQ(Fails({"-Q", "-v", "job.sh"}),
            "sbatch: error: don't specify both --verbose (-v) and --quiet (-Q)");
}

TEST_F(Sbatch, UidAndGidAreForRootOnly) {
  EXPECT_EQ(Fails({"--uid=0", "job.sh"}), "sbatch: error: --uid only permitted by root user");
  EXPECT_EQ(Fails({"--gid=0", "job.sh"}), "sbatch: error: --gid only permitted by root user");
  uid = 0;
  SbatchRequest r = Ok({"--uid=root", "job.sh"});
  EXPECT_EQ(r.spec.uid, 0u);
  EXPECT_EQ(r.spec.user, "root");
  EXPECT_EQ(r.spec.gid, 0u);  // the user's primary group when --gid is not given
  EXPECT_TRUE(r.notices.empty());
  EXPECT_EQ(Ok({"--uid=0", "--gid=7", "job.sh"}).spec.gid, 7u);
  EXPECT_EQ(Fails({"--uid=no-such-user-here", "job.sh"}),
            "sbatch: error: Invalid --uid specification");
  EXPECT_EQ(Fails({"--gid=no-such-group-here", "job.sh"}),
            "sbatch: error: Invalid --gid specification");
}

}  // namespace
}  // namespace drover::cli
