// slurm.conf: cluster keys with Slurm's defaults, NodeName and PartitionName lines with their
// DEFAULT lines, and every kind of bad input with the message an administrator sees.
#include "common/slurm_conf.h"

#include <gtest/gtest.h>

#include "common/cluster_config.h"
#include "common/launch_settings.h"

namespace drover {
namespace {

constexpr const char* kBase = "ClusterName=t\nGresTypes=gpu\n";

ConfigLoad Load(const std::string& body) {
  return LoadClusterConfigText(kBase + body);
}

// With a node and a default partition after `body`, so only what `body` gets wrong is reported.
ConfigLoad LoadComplete(const std::string& body) {
  return Load(body + "NodeName=zz\nPartitionName=zz Nodes=zz Default=YES\n");
}

std::string Messages(const std::vector<Diagnostic>& list) {
  std::string out;
  for (const Diagnostic& d : list) out += d.ToString() + "\n";
  return out;
}

TEST(SlurmConf, DefaultsAreSlurms) {
  ConfigLoad load = Load("NodeName=n1\nPartitionName=p Nodes=n1\n");
  ASSERT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  const ClusterSettings& s = load.config.settings;
  EXPECT_EQ(s.kill_wait_seconds, 30);
  EXPECT_EQ(s.min_job_age_seconds, 300);
  EXPECT_EQ(s.max_array_size, 1001u);
  EXPECT_EQ(s.max_job_count, 10000u);
  EXPECT_EQ(s.slurmd_timeout_seconds, 300);
  EXPECT_EQ(s.decay_half_life_seconds, 7 * 86400);
  EXPECT_EQ(s.priority, PriorityType::kBasic);
  EXPECT_EQ(s.select, SelectType::kConsTres);
  EXPECT_EQ(s.topology, TopologyKind::kFlat);
  EXPECT_TRUE(s.job_requeue);
  EXPECT_EQ(s.scheduler_params.bf_window_minutes, 1440);
  EXPECT_EQ(s.scheduler_params.max_script_size, 4 << 20);
  EXPECT_EQ(s.max_step_count, 40000u);
  const RateLimitSettings& limit = s.controller_params.rate_limit;
  EXPECT_FALSE(limit.enabled);
  EXPECT_EQ(limit.bucket_size, 30u);
  EXPECT_EQ(limit.refill_rate, 2u);
  EXPECT_EQ(limit.refill_period_seconds, 1u);
  EXPECT_EQ(limit.table_size, 8192u);
  EXPECT_EQ(limit.log_freq, 0u);
  const NodeConfig& node = load.config.nodes[0];
  EXPECT_EQ(node.cpus, 1);
  EXPECT_EQ(node.real_memory_mb, 1u);
  EXPECT_EQ(node.weight, 1u);
  const PartitionConfig& p = load.config.partitions[0];
  EXPECT_EQ(p.max_time_seconds, kUnlimitedSeconds);
  EXPECT_EQ(p.priority_tier, 1u);
  EXPECT_FALSE(p.default_time_seconds.has_value());
}

TEST(SlurmConf, AuthKeysKeepSlurmsMeaning) {
  ConfigLoad load = LoadComplete(
      "AuthType=auth/slurm\nAuthInfo=key=/k/slurm.key,ttl=30\nAuthAltTypes=auth/jwt\n"
      "AuthAltParameters=jwt_key=/k/jwt.key\n");
  ASSERT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  EXPECT_EQ(load.config.settings.auth, AuthType::kHmac);
  EXPECT_EQ(load.config.settings.auth_info, "key=/k/slurm.key,ttl=30");
  EXPECT_EQ(load.config.settings.auth_alt_types, std::vector<std::string>{"auth/jwt"});
  EXPECT_EQ(load.config.settings.auth_alt_parameters, "jwt_key=/k/jwt.key");
  EXPECT_TRUE(load.diagnostics.warnings().empty()) << Messages(load.diagnostics.warnings());

  EXPECT_EQ(LoadComplete("AuthType=auth/none\n").config.settings.auth, AuthType::kNone);
  ConfigLoad jwt = LoadComplete("AuthType=auth/jwt\n");
  EXPECT_NE(Messages(jwt.diagnostics.errors())
                .find("AuthType: invalid value 'auth/jwt' (expected auth/munge, auth/slurm or "
                      "auth/none)"),
            std::string::npos)
      << Messages(jwt.diagnostics.errors());
  ConfigLoad alt = LoadComplete("AuthAltTypes=auth/munge\n");
  EXPECT_NE(
      Messages(alt.diagnostics.errors()).find("invalid value 'auth/munge' (expected auth/jwt)"),
      std::string::npos)
      << Messages(alt.diagnostics.errors());
}

TEST(SlurmConf, AccountingStoreFlagsNameWhatTheHistoryKeeps) {
  ConfigLoad load = LoadComplete("AccountingStoreFlags=Job_Script,job_env\n");
  ASSERT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  EXPECT_TRUE(load.config.settings.store_job_script);
  EXPECT_TRUE(load.config.settings.store_job_env);
  EXPECT_FALSE(load.config.settings.store_job_comment);
  EXPECT_FALSE(LoadComplete("").config.settings.store_job_script);
  ConfigLoad typo = LoadComplete("AccountingStoreFlags=job_scripts\n");
  EXPECT_NE(Messages(typo.diagnostics.errors())
                .find("invalid value 'job_scripts' (expected job_comment, job_env or job_script)"),
            std::string::npos)
      << Messages(typo.diagnostics.errors());
}

// The launching commands' keys (launch_settings.h): read by sbatch and srun, checked here.
LaunchSettings Launch(const std::string& text) {
  Diagnostics diagnostics;
  return LaunchSettingsOf(ReadConfText(text, "slurm.conf", diagnostics));
}

TEST(SlurmConf, PropagateResourceLimitsTakesLimitNamesAndOnlyOneOfTheTwoKeys) {
  ConfigLoad load = LoadComplete("PropagateResourceLimits=NOFILE,core\n");
  ASSERT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  EXPECT_EQ(Launch("PropagateResourceLimits=NOFILE,core\n").propagate_resource_limits,
            "NOFILE,core");
  EXPECT_FALSE(Launch("").propagate_resource_limits);
  ConfigLoad except = LoadComplete("PropagateResourceLimitsExcept=MEMLOCK\n");
  ASSERT_TRUE(except.ok()) << Messages(except.diagnostics.errors());
  EXPECT_EQ(Launch("PropagateResourceLimitsExcept=MEMLOCK\n").propagate_resource_limits_except,
            "MEMLOCK");
  ConfigLoad typo = LoadComplete("PropagateResourceLimits=NOFILES\n");
  EXPECT_NE(Messages(typo.diagnostics.errors()).find("'NOFILES' is not a resource limit"),
            std::string::npos)
      << Messages(typo.diagnostics.errors());
  EXPECT_FALSE(Launch("PropagateResourceLimits=NOFILES\n").propagate_resource_limits);
  ConfigLoad both =
      LoadComplete("PropagateResourceLimitsExcept=MEMLOCK\nPropagateResourceLimits=NOFILE\n");
  EXPECT_NE(Messages(both.diagnostics.errors()).find("give one of the two"), std::string::npos)
      << Messages(both.diagnostics.errors());
}

TEST(SlurmConf, BcastKeysAreSrunBcastsDefaults) {
  const std::string text =
      "BcastParameters=DestDir=/scratch,Compression=LZ4,send_libs\nBcastExclude=none\n";
  ConfigLoad load = LoadComplete(text);
  ASSERT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  EXPECT_EQ(Messages(load.diagnostics.warnings()).find("Bcast"), std::string::npos)
      << Messages(load.diagnostics.warnings());
  LaunchSettings launch = Launch(text);
  EXPECT_EQ(launch.bcast_dest_dir, "/scratch");
  EXPECT_EQ(launch.bcast_compression, "lz4");
  EXPECT_TRUE(launch.bcast_send_libs);
  EXPECT_EQ(launch.bcast_exclude, "none");
  EXPECT_EQ(Launch("").bcast_exclude, "/lib,/usr/lib,/lib64,/usr/lib64");
  for (const char* bad : {"BcastParameters=DestDir=tmp\n", "BcastParameters=Compression=zstd\n",
                          "BcastExclude=lib\n"})
    EXPECT_FALSE(LoadComplete(bad).ok()) << bad;
}

TEST(SlurmConf, ClusterKeysAreCaseInsensitiveAndTyped) {
  ConfigLoad load = Load(
      "killwait=45\nSLURMDTIMEOUT=120\nPriorityType=priority/multifactor\n"
      "PriorityDecayHalfLife=2-12:00:00\nPriorityMaxAge=1-0\nPriorityWeightFairshare=10000\n"
      "PriorityWeightTRES=CPU=1,GRES/gpu=100\nSelectTypeParameters=CR_CPU_Memory,CR_Pack_Nodes\n"
      "SchedulerParameters=bf_window=10080,bf_resolution=300,bf_continue,max_switch_wait=600\n"
      "PreemptType=preempt/partition_prio\nPreemptMode=SUSPEND,GANG\nOverTimeLimit=UNLIMITED\n"
      "EnforcePartLimits=YES\nDefMemPerGPU=16G\nSlurmctldHost=head1(10.0.0.1)\n"
      "SlurmctldHost=head2\nSlurmctldPort=6817-6818\nPriorityFlags=no_fair_tree\n"
      "NodeName=n1\n");
  ASSERT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  const ClusterSettings& s = load.config.settings;
  EXPECT_EQ(s.kill_wait_seconds, 45);
  EXPECT_EQ(s.slurmd_timeout_seconds, 120);
  EXPECT_EQ(s.decay_half_life_seconds, 2 * 86400 + 12 * 3600);
  EXPECT_EQ(s.priority_max_age_seconds, 86400);
  EXPECT_EQ(s.weight_fairshare, 10000u);
  ASSERT_EQ(s.weight_tres.size(), 2u);
  EXPECT_EQ(s.weight_tres[1].first, "gres/gpu");
  EXPECT_EQ(s.selection.unit, ResourceSelection::Unit::kCpu);
  EXPECT_TRUE(s.selection.memory);
  EXPECT_TRUE(s.selection.pack_nodes);
  EXPECT_EQ(s.scheduler_params.bf_window_minutes, 10080);
  EXPECT_EQ(s.scheduler_params.bf_resolution_seconds, 300);
  EXPECT_TRUE(s.scheduler_params.bf_continue);
  EXPECT_EQ(s.scheduler_params.max_switch_wait_seconds, 600);
  EXPECT_EQ(s.preempt, PreemptType::kPartitionPriority);
  EXPECT_EQ(s.preempt_mode.base, PreemptMode::Base::kSuspend);
  EXPECT_TRUE(s.preempt_mode.gang);
  EXPECT_EQ(s.over_time_limit_minutes, kUnlimitedSeconds);
  EXPECT_EQ(s.enforce_part_limits, EnforcePartLimits::kAny);
  EXPECT_EQ(s.def_mem_per_gpu_mb, 16384u);
  ASSERT_EQ(s.controller_hosts.size(), 2u);
  EXPECT_EQ(s.controller_hosts[0].address, "10.0.0.1");
  EXPECT_EQ(s.controller_hosts[1].name, "head2");
  EXPECT_EQ(s.controller_port, 6817);
  EXPECT_FALSE(s.fair_tree());
}

TEST(SlurmConf, NodeCpuLayoutFollowsSlurm) {
  struct Case {
    std::string line;
    int cpus, sockets, cores, threads;
  } cases[] = {
      {"NodeName=n1 CPUs=8", 8, 8, 1, 1},
      {"NodeName=n1 Sockets=2 CoresPerSocket=8 ThreadsPerCore=2", 32, 2, 8, 2},
      {"NodeName=n1 CPUs=16 Sockets=2 CoresPerSocket=8 ThreadsPerCore=2", 16, 2, 8, 2},
      {"NodeName=n1 Boards=2 SocketsPerBoard=2 CoresPerSocket=4", 16, 2, 4, 1},
      {"NodeName=n1 Boards=2 Sockets=4 CoresPerSocket=4", 16, 2, 4, 1},
  };
  for (const Case& c : cases) {
    ConfigLoad load = Load(c.line + "\n");
    ASSERT_TRUE(load.ok()) << c.line << Messages(load.diagnostics.errors());
    const NodeConfig& node = load.config.nodes[0];
    EXPECT_EQ(node.cpus, c.cpus) << c.line;
    EXPECT_EQ(node.sockets, c.sockets) << c.line;
    EXPECT_EQ(node.cores_per_socket, c.cores) << c.line;
    EXPECT_EQ(node.threads_per_core, c.threads) << c.line;
  }
  ConfigLoad mismatch = LoadComplete("NodeName=n1 CPUs=10 Sockets=2 CoresPerSocket=4\n");
  EXPECT_EQ(Messages(mismatch.diagnostics.warnings()),
            "slurm.conf:3: node n1: CPUs=10 does not match Sockets x CoresPerSocket x "
            "ThreadsPerCore = 8; using 8\n");
  EXPECT_EQ(mismatch.config.nodes[0].cpus, 8);
}

TEST(SlurmConf, NodeLinesAsLargeSitesWriteThem) {
  ConfigLoad load = Load(
      "NodeName=DEFAULT Sockets=2 CoresPerSocket=56 ThreadsPerCore=2 RealMemory=2000000 \\\n"
      "  Gres=gpu:h100:8 Features=h100,ib\n"
      "NodeName=DEFAULT Weight=10\n"
      "NodeName=gpu[001-004] NodeAddr=10.1.0.[1-4] Port=7001-7004\n"
      "NodeName=gpu[005-006] Features=h100,ib,big RealMemory=4T State=DRAIN Reason=\"new "
      "hardware\"\n");
  ASSERT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  ASSERT_EQ(load.config.nodes.size(), 6u);
  const NodeConfig& first = load.config.nodes[0];
  EXPECT_EQ(first.name, "gpu001");
  EXPECT_EQ(first.address, "10.1.0.1");
  EXPECT_EQ(first.hostname, "gpu001");
  EXPECT_EQ(first.port, 7001);
  EXPECT_EQ(load.config.nodes[3].port, 7004);
  EXPECT_EQ(first.cpus, 224);
  EXPECT_EQ(first.weight, 10u);
  EXPECT_EQ(first.gpus.size(), 8u);
  EXPECT_EQ(first.gpus[7].index, 7);
  EXPECT_EQ(first.gpus[0].type, "h100");
  const NodeConfig& last = load.config.nodes[5];
  EXPECT_EQ(last.real_memory_mb, 4u * 1024 * 1024);
  EXPECT_EQ(last.features, (std::vector<std::string>{"h100", "ib", "big"}));
  EXPECT_EQ(last.state, "DRAIN");
  EXPECT_EQ(last.reason, "new hardware");
  EXPECT_EQ(last.address, "gpu006");
}

TEST(SlurmConf, PartitionLines) {
  ConfigLoad load = Load(
      "NodeName=n[1-4] CPUs=4\n"
      "NodeSet=evens Nodes=n[2,4]\n"
      "PartitionName=DEFAULT State=UP MaxTime=1-00:00:00 DefMemPerCPU=1000\n"
      "PartitionName=all Nodes=ALL Default=YES DefaultTime=30\n"
      "PartitionName=some Nodes=n[3-4],n1 MaxNodes=2 MinNodes=1 PriorityTier=5 "
      "PreemptMode=requeue GraceTime=120 OverSubscribe=FORCE:2 AllowAccounts=a,b\n"
      "PartitionName=even Nodes=evens State=DOWN MaxTime=UNLIMITED Hidden=YES "
      "TRESBillingWeights=CPU=1.0,Mem=0.25G\n");
  ASSERT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  const auto& parts = load.config.partitions;
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(load.config.DefaultPartition(), 0);
  EXPECT_EQ(parts[0].nodes, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(parts[0].default_time_seconds, 1800);
  EXPECT_EQ(parts[0].max_time_seconds, 86400);
  EXPECT_EQ(parts[0].def_mem_per_cpu_mb, 1000u);
  EXPECT_EQ(parts[1].nodes, (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(parts[1].max_nodes, 2u);
  EXPECT_EQ(parts[1].priority_tier, 5u);
  EXPECT_EQ(parts[1].preempt_mode->base, PreemptMode::Base::kRequeue);
  EXPECT_EQ(parts[1].grace_time_seconds, 120);
  EXPECT_EQ(parts[1].over_subscribe.mode, OverSubscribe::Mode::kForce);
  EXPECT_EQ(parts[1].over_subscribe.max_share, 2);
  EXPECT_EQ(parts[1].allow_accounts, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(parts[2].nodes, (std::vector<int>{1, 3}));
  EXPECT_EQ(parts[2].state, PartitionState::kDown);
  EXPECT_EQ(parts[2].max_time_seconds, kUnlimitedSeconds);
  EXPECT_TRUE(parts[2].hidden);
  ASSERT_EQ(parts[2].billing_weights.size(), 2u);
  EXPECT_DOUBLE_EQ(parts[2].billing_weights[1].second, 0.25 / 1024);
}

TEST(SlurmConf, BoundsAndTheRateLimit) {
  ConfigLoad load = Load(
      "SchedulerParameters=max_script_size=1048576\nMaxStepCount=100\n"
      "SlurmctldParameters=enable_configless,rl_enable,rl_bucket_size=50,rl_refill_rate=10,"
      "rl_refill_period=2,rl_table_size=128,rl_log_freq=5\nNodeName=n1\n");
  ASSERT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  const ClusterSettings& s = load.config.settings;
  EXPECT_EQ(s.scheduler_params.max_script_size, 1 << 20);
  EXPECT_EQ(s.max_step_count, 100u);
  const RateLimitSettings& limit = s.controller_params.rate_limit;
  EXPECT_TRUE(limit.enabled);
  EXPECT_EQ(limit.bucket_size, 50u);
  EXPECT_EQ(limit.refill_rate, 10u);
  EXPECT_EQ(limit.refill_period_seconds, 2u);
  EXPECT_EQ(limit.table_size, 128u);
  EXPECT_EQ(limit.log_freq, 5u);
  EXPECT_EQ(s.controller_params.other.count("enable_configless"), 1u);
  EXPECT_EQ(
      Messages(
          LoadComplete("SlurmctldParameters=rl_enable,rl_refill_rate=0\n").diagnostics.errors()),
      "slurm.conf:3: SlurmctldParameters: invalid SlurmctldParameters option "
      "'rl_refill_rate=0' (expected rl_refill_rate=NUMBER, at least 1)\n");
}

TEST(SlurmConf, ErrorsNameTheLineAndWhatToDo) {
  struct Case {
    std::string body, errors;
  } cases[] = {
      {"KillWait=soon\n",
       "slurm.conf:3: KillWait: invalid value 'soon' (expected a whole number from 0 to 65533)\n"},
      {"PriorityType=priority/fancy\n",
       "slurm.conf:3: PriorityType: invalid value 'priority/fancy' (expected priority/multifactor "
       "or priority/basic)\n"},
      {"NodeName=n1\nNodeName=n1\n", "slurm.conf:4: node n1 is already defined at slurm.conf:3\n"},
      {"NodeName=n[1-\n", "slurm.conf:3: NodeName: unbalanced '[' in 'n[1-'\n"},
      {"NodeName=n1\nPartitionName=p Nodes=n[1-2]\n",
       "slurm.conf:4: partition p: node 'n2' is not defined by any NodeName line\n"},
      {"NodeName=n1\nPartitionName=p Nodes=n1\nPartitionName=p Nodes=n1\n",
       "slurm.conf:5: partition p is already defined at slurm.conf:4\n"},
      {"NodeName=n1 Gres=nic:1\n",
       "slurm.conf:3: node n1: Gres 'nic' is not listed in GresTypes; add GresTypes=gpu,nic\n"},
      {"NodeName=n1\nPartitionName=p Nodes=n1 MinNodes=3 MaxNodes=2\n",
       "slurm.conf:4: partition p: MinNodes=3 is above MaxNodes=2\n"},
      {"NodeName=n[1-2] Port=1-3\n",
       "slurm.conf:3: Port=1-3: expected one port, or a range with one port per node (2 nodes)\n"},
      {"NodeName=n1 RealMemory=lots\n",
       "slurm.conf:3: RealMemory: invalid memory size 'lots' (expected a number of megabytes, or "
       "a number with K, M, G or T, e.g. 16G)\n"},
      {"NodeName=n1\nPartitionName=p Nodes=n1 OverSubscribe=SOMETIMES\n",
       "slurm.conf:4: OverSubscribe: invalid value 'SOMETIMES' (expected NO, EXCLUSIVE, YES[:N] "
       "or FORCE[:N])\n"},
  };
  for (const Case& c : cases) {
    ConfigLoad load = LoadComplete(c.body);
    EXPECT_EQ(Messages(load.diagnostics.errors()), c.errors) << c.body;
  }
  ConfigLoad nameless = LoadClusterConfigText("NodeName=n1\n");
  EXPECT_EQ(Messages(nameless.diagnostics.errors()),
            "slurm.conf: ClusterName is not set; add a line such as ClusterName=mycluster\n");
}

TEST(SlurmConf, UnknownKeysWarnWithASuggestionAndDocumentedOnesOnce) {
  ConfigLoad load = Load(
      "NodeName=n1\nPartitoinName=p Nodes=n1\nMpiDefault=pmix\nMpiDefault=none\n"
      "FrobnicateLevel=3\nNodeName=n2 CPUz=4\nSchedulerTypo=sched/backfill\n");
  EXPECT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  EXPECT_EQ(Messages(load.diagnostics.warnings()),
            "slurm.conf:4: unknown slurm.conf key 'PartitoinName' — did you mean 'PartitionName'?\n"
            "slurm.conf:7: unknown slurm.conf key 'FrobnicateLevel' — it is ignored\n"
            "slurm.conf:8: unknown NodeName key 'CPUz' — did you mean 'CPUs'?\n"
            "slurm.conf:9: unknown slurm.conf key 'SchedulerTypo' — did you mean "
            "'SchedulerType'?\n"
            "slurm.conf: no partitions are defined; jobs cannot be submitted until a "
            "PartitionName= line is added\n");
}

TEST(SlurmConf, KeysReadButNotEnforcedWarnOnceAndEnforcedOnesDoNot) {
  ConfigLoad load = Load(
      "NodeName=n1\nTmpFS=/scratch\nSchedulerParameters=bf_continue,"
      "max_rpc_cnt=8\nPrivateData=jobs,usage,nodes\nDisableRootJobs=YES\nGroupUpdateTime=60\n"
      "PartitionName=p Nodes=n1 Default=YES ExclusiveUser=YES AllowGroups=wheel RootOnly=NO "
      "DisableRootJobs=NO AllowQos=ALL DenyAccounts=x\n"
      "PartitionName=q Nodes=n1 ExclusiveUser=YES\n");
  EXPECT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  EXPECT_EQ(Messages(load.diagnostics.warnings()),
            "slurm.conf:4: 'TmpFS' is read but not enforced by Drover yet\n"
            "slurm.conf:5: SchedulerParameters option 'max_rpc_cnt' is read but not enforced by "
            "Drover yet\n"
            "slurm.conf:6: PrivateData=nodes is read but not enforced by Drover yet\n"
            "slurm.conf:9: 'ExclusiveUser' is read but not enforced by Drover yet\n");
  const ClusterSettings& s = load.config.settings;
  EXPECT_TRUE(s.private_data.jobs && s.private_data.usage && s.private_data.nodes);
  EXPECT_FALSE(s.private_data.reservations);
  EXPECT_TRUE(s.disable_root_jobs);
  EXPECT_EQ(s.group_update_time_seconds, 60);
  EXPECT_EQ(load.config.partitions[0].disable_root_jobs, std::optional<bool>(false));
  EXPECT_FALSE(load.config.partitions[1].disable_root_jobs);
  ConfigLoad bad = Load("NodeName=n1\nPrivateData=jobs,secrets\nPartitionName=p Nodes=n1\n");
  EXPECT_NE(Messages(bad.diagnostics.errors()).find("'secrets' is not one of accounts"),
            std::string::npos)
      << Messages(bad.diagnostics.errors());
}

// Drover's own keys: listen addresses and TLS, with the errors an administrator sees.
TEST(SlurmConf, DroverListenAndTlsKeys) {
  ConfigLoad load = LoadComplete(
      "SlurmctldPort=7000\nDroverControllerListen=10.0.0.1\nDroverAgentListen=::1\n"
      "DroverTLSCertFile=/etc/drover/host.pem\nDroverTLSKeyFile=/etc/drover/host.key\n"
      "DroverTLSCAFile=/etc/drover/ca.pem\nDroverTLSRequireClientCert=yes\n"
      "DroverTLSServerName=cluster.example\n");
  ASSERT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  const ClusterSettings& s = load.config.settings;
  EXPECT_EQ(ControllerListenAddress(s), "10.0.0.1:7000");
  EXPECT_EQ(AgentListenAddress(s, load.config.nodes[0]), "[::1]:7818");
  EXPECT_TRUE(s.tls.enabled());
  EXPECT_EQ(s.tls.cert_file, "/etc/drover/host.pem");
  EXPECT_EQ(s.tls.key_file, "/etc/drover/host.key");
  EXPECT_EQ(s.tls.ca_file, "/etc/drover/ca.pem");
  EXPECT_TRUE(s.tls.require_client_cert);
  EXPECT_EQ(s.tls.server_name, "cluster.example");
  EXPECT_TRUE(load.diagnostics.warnings().empty()) << Messages(load.diagnostics.warnings());

  ConfigLoad plain = LoadComplete("");
  EXPECT_EQ(ControllerListenAddress(plain.config.settings), "0.0.0.0:7817");
  EXPECT_FALSE(plain.config.settings.tls.enabled());
}

TEST(SlurmConf, DroverKeysRefuseWhatCannotWork) {
  struct Case {
    std::string body, errors;
  };
  const Case cases[] = {
      {"DroverTLSCertFile=/c.pem\n",
       "slurm.conf: DroverTLSCertFile set without DroverTLSKeyFile and DroverTLSCAFile: TLS needs "
       "DroverTLSCertFile, DroverTLSKeyFile and DroverTLSCAFile together (or none of them, for "
       "plain TCP)\n"},
      {"DroverTLSCertFile=/c.pem\nDroverTLSKeyFile=/k.pem\n",
       "slurm.conf: DroverTLSCertFile and DroverTLSKeyFile set without DroverTLSCAFile: TLS needs "
       "DroverTLSCertFile, DroverTLSKeyFile and DroverTLSCAFile together (or none of them, for "
       "plain TCP)\n"},
      {"DroverTLSRequireClientCert=yes\n",
       "slurm.conf: DroverTLSRequireClientCert needs TLS: set DroverTLSCertFile, DroverTLSKeyFile "
       "and DroverTLSCAFile too\n"},
      {"DroverTLSCAFile=ca.pem\n",
       "slurm.conf:3: DroverTLSCAFile: invalid value 'ca.pem' (expected an absolute path)\n"},
      {"DroverTLSRequireClientCert=maybe\n",
       "slurm.conf:3: DroverTLSRequireClientCert: invalid value 'maybe' (expected YES or NO)\n"},
      {"DroverControllerListen=10.0.0.1:7817\n",
       "slurm.conf:3: DroverControllerListen: invalid value '10.0.0.1:7817' (expected an address "
       "or host name without a port, such as 10.0.0.1 or ::1; the port is SlurmctldPort or "
       "SlurmdPort)\n"},
  };
  for (const Case& c : cases) {
    ConfigLoad load = LoadComplete(c.body);
    EXPECT_EQ(Messages(load.diagnostics.errors()), c.errors) << c.body;
  }
}

// Several SlurmctldHost lines: the commands and agents try them in order. Drover's
// NAME(ADDRESS:PORT) gives each its own port, for several controllers on one host.
TEST(SlurmConf, ControllerHostsInOrderWithTheirOwnPorts) {
  ConfigLoad load = LoadComplete(
      "SlurmctldPort=7000\nSlurmctldHost=ctl1(127.0.0.1:7101)\nSlurmctldHost=ctl2(::1)\n"
      "SlurmctldHost=ctl3([::1]:7103)\nSlurmctldHost=ctl4\n");
  ASSERT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  const ClusterSettings& s = load.config.settings;
  ASSERT_EQ(s.controller_hosts.size(), 4u);
  EXPECT_EQ(s.controller_hosts[0].address, "127.0.0.1");
  EXPECT_EQ(s.controller_hosts[0].port, 7101);
  EXPECT_EQ(s.controller_hosts[1].address, "::1");
  EXPECT_EQ(s.controller_hosts[1].port, 0);
  EXPECT_EQ(ControllerAddresses(s),
            (std::vector<std::string>{"127.0.0.1:7101", "[::1]:7000", "[::1]:7103", "ctl4:7000"}));
  EXPECT_EQ(ControllerAddress(s), "127.0.0.1:7101");
  ConfigLoad bad = LoadComplete("SlurmctldHost=ctl1(127.0.0.1:99999)\n");
  EXPECT_EQ(Messages(bad.diagnostics.errors()),
            "slurm.conf:3: SlurmctldHost: invalid value 'ctl1(127.0.0.1:99999)' (expected NAME, "
            "NAME(ADDRESS) or NAME(ADDRESS:PORT), a port 1-65535)\n");
}

// Where the controller keeps its state: slurmdbd.conf's words for the database connection.
TEST(SlurmConf, StorageKeysSelectPostgresql) {
  ConfigLoad plain = LoadComplete("");
  EXPECT_EQ(plain.config.settings.storage.kind, StorageKind::kSqlite);
  ConfigLoad load = LoadComplete(
      "StorageType=PostgreSQL\nStorageHost=db1.example\nStoragePort=6543\nStorageUser=ctld\n"
      "StoragePassFile=/etc/drover/db.pass\nStorageLoc=cluster_a\n");
  ASSERT_TRUE(load.ok()) << Messages(load.diagnostics.errors());
  const StorageSettings& s = load.config.settings.storage;
  EXPECT_EQ(s.kind, StorageKind::kPostgres);
  EXPECT_EQ(s.host, "db1.example");
  EXPECT_EQ(s.port, 6543);
  EXPECT_EQ(s.user, "ctld");
  EXPECT_EQ(s.pass_file, "/etc/drover/db.pass");
  EXPECT_EQ(s.database, "cluster_a");

  struct Case {
    std::string body, errors;
  };
  const Case cases[] = {
      {"StorageType=mysql\n",
       "slurm.conf:3: StorageType: invalid value 'mysql' (expected sqlite or postgresql)\n"},
      {"StoragePort=0\n",
       "slurm.conf:3: StoragePort: invalid value '0' (expected a port, 1-65535)\n"},
      {"StoragePassFile=db.pass\n",
       "slurm.conf:3: StoragePassFile: invalid value 'db.pass' (expected an absolute path)\n"},
      // The password itself is refused, and never repeated in the message.
      {"StoragePass=hunter2\n",
       "slurm.conf:3: StoragePass: a password in slurm.conf is readable by every user of every "
       "host; put it on the first line of a file only the controller's user can read, and name "
       "that file with StoragePassFile\n"},
  };
  for (const Case& c : cases) {
    ConfigLoad bad = LoadComplete(c.body);
    EXPECT_EQ(Messages(bad.diagnostics.errors()), c.errors) << c.body;
  }
}

}  // namespace
}  // namespace drover
