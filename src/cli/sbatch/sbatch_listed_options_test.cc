// Every option sbatch's issue lists: each reaches the job or the request, or is said once to have
// no effect; abbreviations and bad forms as Slurm's sbatch treats them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>

#include "common/duration.h"

#include "cli/sbatch/sbatch_test_fixture.h"

namespace drover::cli {
namespace {

// ---------------------------------------------------------------------------------------------
// Options with no effect

TEST_F(Sbatch, OptionsWithNoEffectAreAcceptedWithOneNoticeEach) {
  SbatchRequest r = Ok({"--thread-spec=1", "--core-spec=2", "job.sh"});
  EXPECT_EQ(r.notices,
            (std::vector<std::string>{
                "sbatch: warning: --thread-spec is accepted but has no effect in Drover",
                "sbatch: warning: --core-spec is accepted but has no effect in Drover"}));
}

TEST_F(Sbatch, OptionsWithNoEffectStillHaveTheirValuesChecked) {
  EXPECT_EQ(Fails({"--open-mode=sideways", "job.sh"}),
            "sbatch: error: Invalid --open-mode specification");
}

TEST_F(Sbatch, TimeFormsAreChecked) {
  EXPECT_EQ(Fails({"--time=1:2:3:4", "job.sh"}), "sbatch: error: Invalid --time specification");
  EXPECT_EQ(Fails({"--time-min=x", "job.sh"}), "sbatch: error: Invalid --time-min specification");
}

// ---------------------------------------------------------------------------------------------
// The lifecycle options reach the job as Slurm normalises them.

TEST_F(Sbatch, MailOptionsReachTheJob) {
  SbatchRequest r = Ok({"--mail-type=fail,END", "--mail-user=a@b", "--mail-user=c@d", "job.sh"});
  EXPECT_TRUE(r.notices.empty());
  EXPECT_EQ(r.spec.mail_type, "END,FAIL");
  EXPECT_EQ(r.spec.mail_user, "c@d");
  EXPECT_EQ(Ok({"--mail-type=ALL", "job.sh"}).spec.mail_type,
            "INVALID_DEPEND,BEGIN,END,FAIL,REQUEUE,STAGE_OUT");
  EXPECT_EQ(Ok({"--mail-type=NONE", "job.sh"}).spec.mail_type, "");
  EXPECT_EQ(Ok({"job.sh"}).spec.mail_type, "");
  EXPECT_EQ(Fails({"--mail-type=SOMETIMES", "job.sh"}),
            "sbatch: error: Invalid --mail-type specification");
}

TEST_F(Sbatch, KillOnInvalidDepAndNoKillReachTheJob) {
  EXPECT_EQ(Ok({"job.sh"}).spec.kill_on_invalid_dep, 0);
  EXPECT_EQ(Ok({"--kill-on-invalid-dep=yes", "job.sh"}).spec.kill_on_invalid_dep, 1);
  EXPECT_EQ(Ok({"--kill-on-invalid-dep=NO", "job.sh"}).spec.kill_on_invalid_dep, 2);
  EXPECT_EQ(Fails({"--kill-on-invalid-dep=maybe", "job.sh"}),
            "sbatch: error: Invalid --kill-on-invalid-dep specification");
  EXPECT_FALSE(Ok({"job.sh"}).spec.no_kill);
  EXPECT_TRUE(Ok({"-k", "job.sh"}).spec.no_kill);
  EXPECT_TRUE(Ok({"--no-kill", "job.sh"}).spec.no_kill);
  EXPECT_FALSE(Ok({"-k", "--no-kill=off", "job.sh"}).spec.no_kill);
  EXPECT_EQ(Fails({"--no-kill=maybe", "job.sh"}), "sbatch: error: Invalid --no-kill specification");
  // -k takes an optional value, so a letter after it in a bundle is its value (one -k refuses).
  EXPECT_EQ(Fails({"-kH", "job.sh"}), "sbatch: error: Invalid --no-kill specification");
}

// --propagate's list is checked here; sbatch reads the limits once it has read slurm.conf.
TEST_F(Sbatch, PropagateTakesSlurmsLimitNames) {
  EXPECT_EQ(Ok({"--propagate=stack,NOFILE", "job.sh"}).propagate, "stack,NOFILE");
  EXPECT_EQ(Ok({"--propagate", "job.sh"}).propagate, "");
  EXPECT_FALSE(Ok({"job.sh"}).propagate);
  EXPECT_TRUE(Ok({"--propagate=NONE", "job.sh"}).notices.empty());
  EXPECT_EQ(Fails({"--propagate=NOFILES", "job.sh"}),
            "sbatch: error: --propagate=NOFILES is not valid.");
}

// --get-user-env[=timeout][S|L] reaches the job (the agent loads the login environment), and
// the job's variables say so; --export=NONE makes sbatch ignore it, as sbatch(1) says.
TEST_F(Sbatch, GetUserEnvReachesTheJobUnlessExportIsNone) {
  SbatchRequest r = Ok({"--get-user-env=10L", "job.sh"});
  EXPECT_EQ(r.spec.get_user_env, "10L");
  EXPECT_NE(std::find(r.spec.environment.begin(), r.spec.environment.end(), "SLURM_GET_USER_ENV=1"),
            r.spec.environment.end());
  EXPECT_TRUE(r.notices.empty());
  EXPECT_EQ(Ok({"--get-user-env", "job.sh"}).spec.get_user_env, "8");
  EXPECT_EQ(Ok({"--get-user-env=S", "job.sh"}).spec.get_user_env, "S");
  EXPECT_EQ(Ok({"--get-user-env", "--export=NONE", "job.sh"}).spec.get_user_env, "");
  EXPECT_EQ(Fails({"--get-user-env=soon", "job.sh"}),
            "sbatch: error: --get-user-env=soon: expected [timeout][S|L]");
}

// ---------------------------------------------------------------------------------------------
// Every option sbatch's issue lists: each reaches the job or the request, or is said once on
// stderr; none is dropped silently.

TEST_F(Sbatch, EveryListedOptionReachesTheJob) {
  using Check = std::function<bool(const SbatchRequest&)>;
  struct Case {
    std::vector<std::string> args;
    Check check;
  };
  const std::vector<Case> cases = {
      {{"-J", "x"}, [](const SbatchRequest& r) { return r.spec.name == "x"; }},
      {{"-o", "o"}, [](const SbatchRequest& r) { return r.spec.stdout_path == "o"; }},
      {{"-e", "e"}, [](const SbatchRequest& r) { return r.spec.stderr_path == "e"; }},
      {{"-i", "i"}, [](const SbatchRequest& r) { return r.spec.stdin_path == "i"; }},
      {{"-p", "gpu"}, [](const SbatchRequest& r) { return r.spec.partitions.at(0) == "gpu"; }},
      {{"-A", "ml"}, [](const SbatchRequest& r) { return r.spec.account == "ml"; }},
      {{"-q", "high"}, [](const SbatchRequest& r) { return r.spec.qos == "high"; }},
      {{"-t", "5"}, [](const SbatchRequest& r) { return r.spec.time_limit_seconds == 300; }},
      {{"-N", "2"}, [](const SbatchRequest& r) { return r.spec.min_nodes == 2; }},
      {{"-n", "3"}, [](const SbatchRequest& r) { return r.spec.ntasks == 3; }},
      {{"-c", "4"}, [](const SbatchRequest& r) { return r.spec.cpus_per_task == 4; }},
      {{"--ntasks-per-node=2"}, [](const SbatchRequest& r) { return r.spec.ntasks_per_node == 2; }},
      {{"--mem=1G"}, [](const SbatchRequest& r) { return r.spec.mem_per_node_mb == 1024; }},
      {{"--mem-per-cpu=2G"}, [](const SbatchRequest& r) { return r.spec.mem_per_cpu_mb == 2048; }},
      {{"--mem-per-gpu=3G"}, [](const SbatchRequest& r) { return r.spec.mem_per_gpu_mb == 3072; }},
      {{"--gres=gpu:2"}, [](const SbatchRequest& r) { return r.spec.gpus_per_node == 2; }},
      {{"--gpus=4"}, [](const SbatchRequest& r) { return r.spec.gpus == 4; }},
      {{"-G", "a100:4"},
       [](const SbatchRequest& r) { return r.spec.gpus == 4 && r.spec.gpu_type == "a100"; }},
      {{"--gpus-per-node=2"}, [](const SbatchRequest& r) { return r.spec.gpus_per_node == 2; }},
      {{"--gpus-per-task=1"}, [](const SbatchRequest& r) { return r.spec.gpus_per_task == 1; }},
      {{"--cpus-per-gpu=6"}, [](const SbatchRequest& r) { return r.spec.cpus_per_gpu == 6; }},
      {{"-C", "a&b"}, [](const SbatchRequest& r) { return r.spec.constraint == "a&b"; }},
      {{"--nodelist=n[1-2]"}, [](const SbatchRequest& r) { return r.spec.nodelist.size() == 2; }},
      {{"-w", "n1"}, [](const SbatchRequest& r) { return r.spec.nodelist.at(0) == "n1"; }},
      {{"--exclude=n3"}, [](const SbatchRequest& r) { return r.spec.exclude.at(0) == "n3"; }},
      {{"-x", "n[3-4]"}, [](const SbatchRequest& r) { return r.spec.exclude.size() == 2; }},
      {{"--exclusive"}, [](const SbatchRequest& r) { return r.spec.exclusive; }},
      {{"--array=1-3"}, [](const SbatchRequest& r) { return r.array == "1-3"; }},
      {{"-a", "0-7%2"}, [](const SbatchRequest& r) { return r.array == "0-7%2"; }},
      {{"--dependency=afterany:7"},
       [](const SbatchRequest& r) { return r.spec.dependency.terms.at(0).job_id == 7; }},
      {{"-d", "singleton"},
       [](const SbatchRequest& r) {
         return r.spec.dependency.terms.at(0).type == DependencyType::kSingleton;
       }},
      {{"--begin=now+60"}, [](const SbatchRequest& r) { return r.spec.begin_time == kNow + 60; }},
      {{"--hold"}, [](const SbatchRequest& r) { return r.spec.hold == HoldKind::kUser; }},
      {{"-H"}, [](const SbatchRequest& r) { return r.hold; }},
      {{"--nice=7"}, [](const SbatchRequest& r) { return r.spec.nice == 7; }},
      {{"--signal=USR2@90"}, [](const SbatchRequest& r) { return r.spec.signal_seconds == 90; }},
      {{"--no-requeue"}, [](const SbatchRequest& r) { return !r.spec.requeue; }},
      {{"--requeue"}, [](const SbatchRequest& r) { return r.spec.requeue; }},
      {{"--export=NONE"},
       [](const SbatchRequest& r) { return !HasName(r.spec.environment, "HOME"); }},
      {{"--export-file=env.txt"},
       [](const SbatchRequest& r) { return Has(r.spec.environment, "FROM_FILE=1"); }},
      {{"--chdir=/tmp"}, [](const SbatchRequest& r) { return r.spec.work_dir == "/tmp"; }},
      {{"-D", "/srv"}, [](const SbatchRequest& r) { return r.spec.work_dir == "/srv"; }},
      {{"--comment=c"}, [](const SbatchRequest& r) { return r.spec.comment == "c"; }},
      {{"--switches=1@5"}, [](const SbatchRequest& r) { return r.spec.switches == 1; }},
      {{"--segment=2"}, [](const SbatchRequest& r) { return r.spec.segment == 2; }},
      {{"--reservation=r"}, [](const SbatchRequest& r) { return r.spec.reservation == "r"; }},
      {{"--time-min=10"}, [](const SbatchRequest& r) { return r.spec.time_min_seconds == 600; }},
      {{"--test-only"}, [](const SbatchRequest& r) { return r.test_only; }},
      {{"--wait"}, [](const SbatchRequest& r) { return r.wait; }},
      {{"-W"}, [](const SbatchRequest& r) { return r.wait; }},
      {{"-Q"}, [](const SbatchRequest& r) { return r.quiet; }},
      {{"--deadline=now+1hour"},
       [](const SbatchRequest& r) { return r.spec.deadline == kNow + 3600; }},
      {{"--mail-type=END"}, [](const SbatchRequest& r) { return r.spec.mail_type == "END"; }},
      {{"--mail-user=a@b"}, [](const SbatchRequest& r) { return r.spec.mail_user == "a@b"; }},
      {{"-k"}, [](const SbatchRequest& r) { return r.spec.no_kill; }},
  };
  files["/home/alice/work/env.txt"] = "FROM_FILE=1\n";
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    args.push_back("job.sh");
    SbatchRequest r = Ok(args);
    EXPECT_TRUE(c.check(r)) << args[0];
    EXPECT_TRUE(r.notices.empty()) << args[0];
  }
}

TEST_F(Sbatch, AmbiguousPrefixesOfListedOptionsAreRefused) {
  for (const char* prefix : {"--exc", "--gpus-per", "--ntasks-per", "--no-", "--ti"}) {
    std::string error = Fails({std::string(prefix) + "=1", "job.sh"});
    EXPECT_EQ(
        error.rfind(fmt::format("sbatch: option '{}=1' is ambiguous; possibilities:", prefix), 0),
        0u)
        << error;
  }
  EXPECT_EQ(Ok({"--test", "--dead=now+60", "--chd=/x", "--depend=singleton", "job.sh"}).test_only,
            true);
  EXPECT_EQ(Ok({"--nodel=n1", "job.sh"}).spec.nodelist, std::vector<std::string>{"n1"});
  EXPECT_EQ(Ok({"--exclus", "job.sh"}).spec.exclusive, true);
}

TEST_F(Sbatch, BadFormsOfListedOptionsAreSlurmsErrors) {
  struct Case {
    const char* option;
    const char* error;
  };
  for (const Case& c : std::vector<Case>{
           {"-N0", "sbatch: error: invalid number of nodes (-N 0)"},
           {"-n0", "sbatch: error: Invalid numeric value \"0\" for --ntasks."},
           {"-cx", "sbatch: error: Invalid numeric value \"x\" for --cpus-per-task."},
           {"-t1:2:3:4", "sbatch: error: Invalid --time specification"},
           {"--mem=1Q", "sbatch: error: Invalid --mem specification"},
           {"--mem-per-gpu=x", "sbatch: error: Invalid --mem-per-gpu specification"},
           {"--begin=someday", "sbatch: error: Invalid --begin specification"},
           {"--deadline=never", "sbatch: error: Invalid --deadline specification"},
           {"--exclusive=everyone", "sbatch: error: Invalid --exclusive specification"},
           {"--signal=NOPE", "sbatch: error: Invalid --signal specification"},
           {"--open-mode=x", "sbatch: error: Invalid --open-mode specification"},
           {"--mail-type=NEVER", "sbatch: error: Invalid --mail-type specification"},
           {"--time-min=1-2-3", "sbatch: error: Invalid --time-min specification"},
           {"--switches=0", "sbatch: error: Invalid numeric value \"0\" for --switches."},
           {"--ntasks-per-node=-1",
            "sbatch: error: Invalid numeric value \"-1\" for --ntasks-per-node."},
       }) {
    EXPECT_EQ(Fails({c.option, "job.sh"}), c.error) << c.option;
  }
}

}  // namespace
}  // namespace drover::cli
