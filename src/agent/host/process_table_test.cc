// Which step each process belongs to: task groups, batch sessions, descendants that left both,
// the order scontrol listpids prints, and /proc's stat lines (a fake tree and this process).
#include "agent/host/process_table.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace drover::agent {
namespace {

namespace fs = std::filesystem;

// A batch job (shell 100, its child 101, a grandchild 102 that called setsid) whose script
// started srun: the srun client 103 is in the shell's session, while step 0's two tasks (200,
// 201, each its own group; 202 a child of 200) were started by the agent (pid 50). Job 8 is an
// allocation holder (300). 400 is nobody's.
std::vector<ProcessInfo> Table() {
  return {{50, 1, 50, 50},      {100, 60, 100, 100}, {101, 100, 100, 100}, {102, 101, 102, 102},
          {103, 100, 103, 100}, {200, 50, 200, 50},  {201, 50, 201, 50},   {202, 200, 200, 50},
          {300, 61, 300, 300},  {400, 1, 400, 400}};
}

std::vector<TrackedLeader> Leaders() {
  return {{7, kBatchStepId, 100, true, 0, 0},
          {7, 0, 201, false, 1, 3},
          {7, 0, 200, false, 0, 2},
          {8, kExternStepId, 300, true, 0, 0}};
}

TEST(ProcessTable, AssignsEveryProcessOfAJobToItsStep) {
  std::vector<ListedPid> listed = AssignProcesses(Table(), Leaders());
  ASSERT_EQ(listed.size(), 8u);
  auto at = [&](size_t i) {
    const ListedPid& e = listed[i];
    return std::make_tuple(e.job_id, e.step_id, e.pid, e.local_task, e.global_task);
  };
  // Step 0: the tasks by local id, then the rest; a task's child is in its group.
  EXPECT_EQ(at(0), std::make_tuple(uint64_t{7}, 0u, 200, 0, 2));
  EXPECT_EQ(at(1), std::make_tuple(uint64_t{7}, 0u, 201, 1, 3));
  EXPECT_EQ(at(2), std::make_tuple(uint64_t{7}, 0u, 202, -1, -1));
  // The batch step: the shell, its session (srun's client too) and the descendant that left it.
  EXPECT_EQ(at(3), std::make_tuple(uint64_t{7}, kBatchStepId, 100, 0, 0));
  EXPECT_EQ(at(4), std::make_tuple(uint64_t{7}, kBatchStepId, 101, -1, -1));
  EXPECT_EQ(at(5), std::make_tuple(uint64_t{7}, kBatchStepId, 102, -1, -1));
  EXPECT_EQ(at(6), std::make_tuple(uint64_t{7}, kBatchStepId, 103, -1, -1));
  EXPECT_EQ(at(7), std::make_tuple(uint64_t{8}, kExternStepId, 300, 0, 0));
}

TEST(ProcessTable, ListsNothingWithoutLeaders) {
  EXPECT_TRUE(AssignProcesses(Table(), {}).empty());
}

TEST(ProcessTable, ReadsStatLinesWithOddCommandNames) {
  fs::path proc = fs::temp_directory_path() / ("process_table_test_" + std::to_string(getpid()));
  fs::create_directories(proc / "42");
  fs::create_directories(proc / "43");
  fs::create_directories(proc / "44");
  fs::create_directories(proc / "self");
  std::ofstream(proc / "42" / "stat") << "42 (a (b) c) S 7 40 41 0 -1 4194304 1 0 0\n";
  std::ofstream(proc / "43" / "stat") << "43 (gone) Z 42 40 41 0\n";  // a zombie: left out
  std::ofstream(proc / "44" / "stat") << "garbage";
  // A stat that opens but fails the read, as a process's does when it ends between the two
  // (ESRCH); a folder fails the same way (EISDIR). Skipped, not thrown.
  fs::create_directories(proc / "45" / "stat");
  std::vector<ProcessInfo> table = ReadProcessTable(proc);
  fs::remove_all(proc);
  ASSERT_EQ(table.size(), 1u);
  EXPECT_EQ(table[0].pid, 42);
  EXPECT_EQ(table[0].ppid, 7);
  EXPECT_EQ(table[0].group, 40);
  EXPECT_EQ(table[0].session, 41);
}

TEST(ProcessTable, FindsThisProcessInProc) {
  bool found = false;
  for (const ProcessInfo& process : ReadProcessTable())
    if (process.pid == getpid()) {
      found = true;
      EXPECT_EQ(process.ppid, getppid());
      EXPECT_EQ(process.group, getpgrp());
      EXPECT_EQ(process.session, getsid(0));
    }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace drover::agent
