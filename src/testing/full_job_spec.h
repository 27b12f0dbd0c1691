// A JobSpec whose every field differs from its default, for round-trip tests of the codecs
// (wire/job_spec_codec_test.cc, ctld/records_test.cc). Test-only: never linked into a daemon.
#pragma once

#include "common/job_spec.h"

namespace drover::testing {

// Every field differs from JobSpec's default.
inline JobSpec FullSpec() {
  JobSpec spec;
  spec.job_id = 12;
  spec.array_job_id = 10;
  spec.array_task_id = 2;
  spec.name = "train";
  spec.user = "alice";
  spec.account = "ml";
  spec.qos = "high";
  spec.uid = 1001;
  spec.gid = 1002;
  spec.partitions = {"p", "q"};
  spec.min_nodes = 2;
  spec.max_nodes = 3;
  spec.ntasks = 4;
  spec.ntasks_per_node = 2;
  spec.cpus_per_task = 3;
  spec.cpus_per_task_given = true;
  spec.ntasks_given = true;
  spec.mem_per_node_mb = 500;
  spec.mem_per_cpu_mb = 100;
  spec.mem_per_gpu_mb = 200;
  spec.gpu_type = "h100";
  spec.gpus = 4;
  spec.gpus_per_node = 2;
  spec.gpus_per_task = 1;
  spec.cpus_per_gpu = 2;
  spec.other_gres = {{"nic", "mlx", 2, {}}, {"mps", "", 100, {}}};
  spec.constraint = "a&b";
  spec.nodelist = {"n1"};
  spec.exclude = {"n2", "n3"};
  spec.exclusive = true;
  spec.time_limit_seconds = 3600;
  spec.time_min_seconds = 600;
  spec.submit_time = 1'700'000'000;
  spec.begin_time = 1'700'000'100;
  spec.dependency = {{{DependencyType::kAfterOk, 5, 0}, {DependencyType::kAfter, 6, 600}}, true};
  spec.hold = HoldKind::kAdmin;
  spec.nice = -5;
  spec.switches = 1;
  spec.switch_wait_seconds = 120;
  spec.segment = 2;
  spec.reservation = "maint";
  spec.signal_number = 10;
  spec.signal_seconds = 30;
  spec.signal_batch_only = true;
  spec.requeue = false;
  spec.array_max_running = 5;
  spec.work_dir = "/home/alice/proj";
  spec.stdout_path = "slurm-%j.out";
  spec.stderr_path = "slurm-%j.err";
  spec.stdin_path = "/dev/null";
  spec.environment = {"PATH=/usr/bin", "OMP_NUM_THREADS=8"};
  spec.script_args = {"--lr", "0.1", "two words", ""};
  spec.comment = "sweep 3";
  spec.min_cpus_per_node = 4;
  spec.min_tmp_disk_mb = 1024;
  spec.min_sockets = 2;
  spec.min_cores_per_socket = 8;
  spec.min_threads_per_core = 2;
  spec.overcommit = true;
  spec.priority = 77;
  spec.contiguous = true;
  spec.prefer = "a100";
  spec.spread_job = true;
  spec.oversubscribe = true;
  spec.licenses = "fluent:2,matlab";
  spec.batch_features = "login";
  spec.core_spec = 2;
  spec.thread_spec = 0;
  spec.gres_flags = "enforce-binding";
  spec.deadline = 1'700'090'000;
  spec.kill_on_invalid_dep = 1;
  spec.no_kill = true;
  spec.mail_type = "BEGIN,END";
  spec.mail_user = "alice@example.org";
  spec.rlimits = {"NOFILE=1024:4096", "CORE=0:unlimited"};
  spec.get_user_env = "60L";
  spec.admin_comment = "checked by ops";
  spec.site_factor = -40;
  spec.dependency.terms.push_back({DependencyType::kAfterOk, 7, 0, 3});
  return spec;
}

}  // namespace drover::testing
