// sbatch's node minimums, -M, #PBS and #BSUB lines, --priority, the options Slurm hands on to the
// job's steps as variables, and those for features Drover (like Slurm without them) lacks.
#include <fmt/format.h>

#include "cli/sbatch/sbatch_test_fixture.h"

namespace drover::cli {
namespace {

TEST_F(Sbatch, NodeMinimumsReachTheJob) {
  SbatchRequest r = Ok({"--mincpus=4", "--tmp=10G", "-B", "2:4:2", "job.sh"});
  EXPECT_EQ(r.spec.min_cpus_per_node, 4u);
  EXPECT_EQ(r.spec.min_tmp_disk_mb, 10240u);
  EXPECT_EQ(r.spec.min_sockets, 2u);
  EXPECT_EQ(r.spec.min_cores_per_socket, 4u);
  EXPECT_EQ(r.spec.min_threads_per_core, 2u);
  // '*' is any; a range's minimum is what selection uses; the long options set one level.
  r = Ok({"-B", "*:8", "--sockets-per-node=2-4", "--threads-per-core=1", "job.sh"});
  EXPECT_EQ(r.spec.min_sockets, 2u);
  EXPECT_EQ(r.spec.min_cores_per_socket, 8u);
  EXPECT_EQ(r.spec.min_threads_per_core, 1u);
  EXPECT_TRUE(Has(r.spec.environment, "SLURM_THREADS_PER_CORE=1"));
  EXPECT_TRUE(r.notices.empty());
  EXPECT_TRUE(Ok({"--contiguous", "job.sh"}).spec.contiguous);
  EXPECT_EQ(Fails({"-B", "1:2:3:4", "job.sh"}),
            "sbatch: error: Invalid --extra-node-info specification");
  EXPECT_EQ(Fails({"--cores-per-socket=0", "job.sh"}),
            "sbatch: error: Invalid --cores-per-socket specification");
  EXPECT_EQ(Fails({"--tmp=lots", "job.sh"}), "sbatch: error: Invalid --tmp specification");
}

TEST_F(Sbatch, PlacementOptionsReachTheJob) {
  SbatchRequest r = Ok({"--prefer=fast&ib", "--spread-job", "-L", "fluent:2,ansys", "--batch=big",
                        "--gres-flags=Enforce-Binding", "job.sh"});
  EXPECT_EQ(r.spec.prefer, "fast&ib");
  EXPECT_TRUE(r.spec.spread_job);
  EXPECT_EQ(r.spec.licenses, "fluent:2,ansys");  // the controller checks them against Licenses=
  EXPECT_EQ(r.spec.batch_features, "big");
  EXPECT_EQ(r.spec.gres_flags, "enforce-binding");
  EXPECT_TRUE(r.notices.empty());
  EXPECT_EQ(Ok({"--gres-flags=disable-binding", "job.sh"}).spec.gres_flags, "disable-binding");
  EXPECT_EQ(Fails({"--gres-flags=bind-harder", "job.sh"}),
            "sbatch: error: Invalid --gres-flags specification");
  environment["SBATCH_SPREAD_JOB"] = "1";
  environment["SBATCH_GRES_FLAGS"] = "enforce-binding";
  r = Ok({"job.sh"});
  EXPECT_TRUE(r.spec.spread_job);
  EXPECT_EQ(r.spec.gres_flags, "enforce-binding");
}

TEST_F(Sbatch, ClustersAreKeptForTheCheckAgainstSlurmConf) {
  EXPECT_EQ(Ok({"-M", "linux", "job.sh"}).clusters, "linux");
  EXPECT_EQ(Ok({"--cluster=all", "job.sh"}).clusters, "all");
  EXPECT_FALSE(Ok({"job.sh"}).clusters);
  environment["SLURM_CLUSTERS"] = "linux";
  EXPECT_EQ(Ok({"job.sh"}).clusters, "linux");
  EXPECT_EQ(Ok({"-M", "other", "job.sh"}).clusters, "other");  // the option wins
}

TEST_F(Sbatch, PbsLinesAreTranslatedAsSlurmDoes) {
  Script(
      "#SBATCH -J from-sbatch\n#PBS -N pbsname\n#PBS -l nodes=2:ppn=4,walltime=01:00:00,mem=4gb\n"
      "#PBS -q short -A acct\n#PBS -m abe -M a@b\n#PBS -W depend=afterok:5\n#PBS -j oe -V");
  SbatchRequest r = Ok({"-A", "mine", "job.sh"});
  EXPECT_EQ(r.spec.name, "pbsname");  // #PBS lines come after #SBATCH lines
  EXPECT_EQ(r.spec.min_nodes, 2u);
  EXPECT_EQ(r.spec.ntasks, 8u);
  EXPECT_EQ(r.spec.time_limit_seconds, 3600);
  EXPECT_EQ(r.spec.mem_per_node_mb, 4096u);
  EXPECT_EQ(r.spec.partitions, std::vector<std::string>{"short"});
  EXPECT_EQ(r.spec.account, "mine");  // the command line wins
  ASSERT_EQ(r.spec.dependency.terms.size(), 1u);
  EXPECT_EQ(r.spec.dependency.terms[0].job_id, 5u);
  // PBS Pro's chunks: select nodes, ncpus per node over mpiprocs tasks gives CPUs per task.
  Script("#PBS -l select=2:ncpus=8:mpiprocs=4");
  r = Ok({"job.sh"});
  EXPECT_EQ(r.spec.min_nodes, 2u);
  EXPECT_EQ(r.spec.ntasks_per_node, 4u);
  EXPECT_EQ(r.spec.min_cpus_per_node, 8u);
  EXPECT_EQ(r.spec.cpus_per_task, 2u);
}

TEST_F(Sbatch, IgnorePbsInEveryPlaceSlurmLooks) {
  Script("#PBS -N pbsname");
  EXPECT_EQ(Ok({"job.sh"}).spec.name, "pbsname");
  EXPECT_EQ(Ok({"--ignore-pbs", "job.sh"}).spec.name, "job.sh");
  environment["SBATCH_IGNORE_PBS"] = "";
  EXPECT_EQ(Ok({"job.sh"}).spec.name, "job.sh");
  environment.erase("SBATCH_IGNORE_PBS");
  Script("#SBATCH --ignore-pbs\n#PBS -N pbsname");
  EXPECT_EQ(Ok({"job.sh"}).spec.name, "job.sh");
}

TEST_F(Sbatch, BsubLinesWinOverPbsLines) {
  Script("#BSUB -n 2,4 -W 30 -q normal -x\n#BSUB -m \"n1 n2\"\n#PBS -N pbsname");
  SbatchRequest r = Ok({"job.sh"});
  EXPECT_EQ(r.spec.ntasks, 4u);  // min,max: the maximum
  EXPECT_EQ(r.spec.time_limit_seconds, 1800);
  EXPECT_EQ(r.spec.partitions, std::vector<std::string>{"normal"});
  EXPECT_TRUE(r.spec.exclusive);
  EXPECT_EQ(r.spec.nodelist, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(r.spec.name, "job.sh");  // one kind at most
}

TEST_F(Sbatch, BadPbsLinesSayWhere) {
  Script("#PBS -Z");
  EXPECT_EQ(Fails({"job.sh"}),
            "sbatch: invalid option -- 'Z' (#PBS on line 2)\n"
            "sbatch: error: Unrecognized command line parameter ?");
  Script("#PBS -l walltime=forever");
  EXPECT_EQ(Fails({"job.sh"}), "sbatch: error: Invalid --time specification (#PBS on line 2)");
  Script("#PBS -N x extra");
  EXPECT_EQ(Fails({"job.sh"}), "sbatch: error: Invalid argument: extra (#PBS on line 2)");
}

TEST_F(Sbatch, PriorityIsANumberOrTop) {
  EXPECT_EQ(Ok({"--priority=10", "job.sh"}).spec.priority, 10u);
  EXPECT_EQ(Ok({"--priority=TOP", "job.sh"}).spec.priority, 4294967293u);
  SbatchRequest held = Ok({"--priority=0", "job.sh"});
  EXPECT_EQ(held.spec.priority, 0u);
  EXPECT_EQ(held.spec.hold, HoldKind::kAdmin);
  EXPECT_EQ(Fails({"--priority=-1", "job.sh"}), "sbatch: error: Priority must be >= 0");
  EXPECT_EQ(Fails({"--priority=4294967294", "job.sh"}),
            "sbatch: error: Priority must be < 4294967294");
}

TEST_F(Sbatch, StepOptionsBecomeTheVariablesSlurmSets) {
  SbatchRequest r =
      Ok({"-m", "cyclic:block", "--cpu-freq=low-high:performance", "--gpu-freq=high",
          "--gpu-bind=closest", "--mem-bind=verbose,map_mem:0,1", "--ntasks-per-core=1",
          "--ntasks-per-socket=2", "--profile=task", "-O", "job.sh"});
  for (const char* line :
       {"SLURM_DISTRIBUTION=cyclic:block", "SLURM_CPU_FREQ_REQ=low-high:performance",
        "SLURM_GPU_FREQ=high", "SLURM_GPU_BIND=closest", "SBATCH_MEM_BIND=verbose,map_mem:0,1",
        "SBATCH_MEM_BIND_TYPE=map_mem:", "SBATCH_MEM_BIND_LIST=0,1",
        "SBATCH_MEM_BIND_VERBOSE=verbose", "SLURM_NTASKS_PER_CORE=1", "SLURM_NTASKS_PER_SOCKET=2",
        "SLURM_PROFILE=task", "SLURM_OVERCOMMIT=1"})
    EXPECT_TRUE(Has(r.spec.environment, line)) << line;
  EXPECT_TRUE(r.spec.overcommit);
  EXPECT_TRUE(r.notices.empty());
  r = Ok({"-m", "plane=4", "job.sh"});
  EXPECT_TRUE(Has(r.spec.environment, "SLURM_DISTRIBUTION=plane"));
  EXPECT_TRUE(Has(r.spec.environment, "SLURM_DIST_PLANESIZE=4"));
  EXPECT_EQ(Fails({"-m", "diagonal", "job.sh"}),
            "sbatch: error: Invalid --distribution specification");
  EXPECT_EQ(Fails({"--cpu-freq=fast", "job.sh"}),
            "sbatch: error: Invalid --cpu-freq specification");
  EXPECT_EQ(Fails({"--mem-bind=everywhere", "job.sh"}),
            "sbatch: error: Invalid --mem-bind specification");
}

TEST_F(Sbatch, InputVariablesOfTheseOptions) {
  environment["SBATCH_DISTRIBUTION"] = "cyclic";
  environment["SBATCH_POWER"] = "level";
  environment["SBATCH_THREADS_PER_CORE"] = "2";
  environment["SBATCH_OVERCOMMIT"] = "1";
  environment["SBATCH_CLUSTERS"] = "demo";
  SbatchRequest r = Ok({"job.sh"});
  EXPECT_TRUE(Has(r.spec.environment, "SLURM_DISTRIBUTION=cyclic"));
  EXPECT_EQ(r.spec.min_threads_per_core, 2u);
  EXPECT_TRUE(r.spec.overcommit);
  EXPECT_EQ(r.clusters, "demo");
  EXPECT_TRUE(r.notices.empty());
}

TEST_F(Sbatch, GpuTaskLayout) {
  SbatchRequest r = Ok({"--gpus=3", "--ntasks-per-gpu=2", "job.sh"});
  EXPECT_EQ(r.spec.ntasks, 6u);
  EXPECT_TRUE(Has(r.spec.environment, "SLURM_NTASKS_PER_GPU=2"));
  EXPECT_EQ(Ok({"--gpus-per-socket=1", "--sockets-per-node=2", "job.sh"}).spec.gpus_per_node, 2u);
  EXPECT_EQ(Fails({"--gpus-per-socket=1", "job.sh"}),
            "sbatch: error: --gpus-per-socket option requires --sockets-per-node specification");
}

TEST_F(Sbatch, OptionsForFeaturesDroverLacksActAsSlurmWithoutThem) {
  files["/home/alice/work/bb.txt"] = "#BB create_persistent name=x capacity=1G\n";
  SbatchRequest r =
      Ok({"--bb=capacity=1G", "--bbf=bb.txt", "--power=level", "--network=x",
          "--cluster-constraint=a", "--reboot", "--wait-all-nodes=1", "--delay-boot=5",
          "--acctg-freq=task=30,energy=60", "--use-min-nodes", "--wckey=w", "job.sh"});
  EXPECT_TRUE(r.notices.empty());
  EXPECT_EQ(Fails({"--wait-all-nodes=2", "job.sh"}),
            "sbatch: error: Invalid --wait-all-nodes specification");
  EXPECT_EQ(Fails({"--acctg-freq=disk=5", "job.sh"}),
            "sbatch: error: Invalid --acctg-freq specification");
  EXPECT_EQ(Fails({"--delay-boot=soon", "job.sh"}),
            "sbatch: error: Invalid --delay-boot specification");
  EXPECT_EQ(Fails({"--bbf=missing.txt", "job.sh"}),
            "sbatch: error: Unable to open file missing.txt");
  // mcs/none accepts a label and keeps none.
  EXPECT_TRUE(Ok({"--mcs-label=research", "job.sh"}).notices.empty());
}

}  // namespace
}  // namespace drover::cli
