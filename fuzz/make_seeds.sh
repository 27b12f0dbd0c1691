#!/usr/bin/env bash
# Writes the seeds of the fuzz_rpc_requests target (fuzz/seeds/rpc_requests/): one realistic
# request of each kind, its first byte the kind rpc_requests_fuzz.cc switches on, the rest the
# message encoded by protoc from its text form. Run it after changing those requests; commit
# what it writes. Needs protoc (Debian's protobuf-compiler).
set -euo pipefail
cd "$(dirname "$0")/.."
out=fuzz/seeds/rpc_requests
mkdir -p "$out"
rm -f "$out"/*

spec='spec { name: "train" user: "alice" uid: 1000 gid: 1000 partitions: "gpu" min_nodes: 2
  max_nodes: 2 ntasks: 8 ntasks_per_node: 4 cpus_per_task: 4 mem_per_node_mb: 64000 gpus_per_node: 4
  constraint: "a100&ib" time_limit_seconds: 3600 dependency { terms { type: AFTER_OK job_id: 12 } }
  work_dir: "/home/alice" stdout_path: "/home/alice/slurm-%j.out" environment: "PATH=/usr/bin"
  script_args: "--epochs=3" }'
filter='filter { job_ids: 12 array_tasks { array_job_id: 14 task_id: 3 } user: "alice" state: "PENDING" }'
caller='caller { uid: 1000 gid: 1000 }'

# kind, message, text
write() {
  local file
  file=$out/$(printf '%02d' "$1")-$2
  printf "\\x$(printf '%02x' "$1")" >"$file"
  protoc --proto_path=proto --encode="drover.v1.$2" drover.proto <<<"$3" >>"$file"
}

write 0 SubmitRequest "$caller $spec array: \"0-15%4\" script: \"#!/bin/sh\\n#SBATCH -N2\\nsrun hostname\\n\""
write 1 SubmitManyRequest "jobs { $caller $spec } jobs { $caller $spec array: \"1,3,5\" }"
write 2 CancelRequest "$caller $filter signal: 10 batch_only: true"
write 3 HoldRequest "$caller $filter release: true"
write 4 RequeueRequest "$caller $filter hold: true"
write 5 UpdateNodeRequest "$caller nodes: \"node[1-4]\" state: \"DRAIN\" reason: \"maintenance\""
write 6 UpdateJobRequest "$caller $filter time_limit_seconds: 1800 nice: 10 partition: \"debug\""
write 7 SuspendRequest "$caller $filter resume: true"
write 8 ReservationRequest "$caller name: \"maint\" start_time: 1700000000 duration_seconds: 3600
  node_list: \"node[1-2]\" users: \"alice,bob\" flags: \"MAINT\""
write 9 TopRequest "$caller jobs { array_job_id: 12 task_id: 4294967295 } jobs { array_job_id: 14 task_id: 2 }"
write 10 CreateStepRequest "$caller job_id: 12 name: \"hostname\" nodes: 2 ntasks: 4 nodelist: \"node1\""
write 11 StepEndedRequest "$caller job_id: 12 step_id: 0 exit_code: 1 cpu_seconds: 2.5 max_rss_mib: 100"
write 12 ReleaseRequest "$caller job_id: 12 exit_code: 0"
write 13 JobEndedRequest "job_id: 12 node: \"node1\" exit_code: 0 reason: \"\" cpu_seconds: 7.25 max_rss_mib: 512"
write 14 RegisterRequest "node: \"node1\" running_jobs: 12 running_jobs: 13 address: \"127.0.0.1:6818\" cpus: 64
  memory_mb: 512000 gpus: 8 gpu_source: \"nvml\""
write 15 HeartbeatRequest "node: \"node1\" healthy: false health_output: \"disk full\""
write 16 HistoryQuery "$filter start_time: 1700000000 end_time: 1700086400"
write 17 JobQuery "$filter all_states: true with_plan: true"
write 18 LaunchRequest "job { $spec state: \"RUNNING\" allocation { node: 0 } restart_count: 1 }
  script: \"#!/bin/sh\\nsrun hostname\\n\""
write 19 JobEndedBatch "ends { job_id: 12 node: \"node1\" exit_code: 0 } ends { job_id: 13 node: \"node2\" signal: 9 reason: \"killed\" }"
write 20 LaunchBatch "launches { node: \"node1\" launch { job { $spec state: \"RUNNING\" allocation { node: 0 } } script: \"#!/bin/sh\\ntrue\\n\" } }"
