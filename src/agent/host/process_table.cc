// See process_table.h.
#include "agent/host/process_table.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>

namespace drover::agent {
namespace fs = std::filesystem;

namespace {

// /proc/PID/stat: "pid (comm) state ppid pgrp session ..."; comm may hold spaces and ')'.
std::optional<ProcessInfo> ParseStat(const std::string& text) {
  size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  ProcessInfo info;
  std::istringstream head(text.substr(0, text.find(' ')));
  std::istringstream tail(text.substr(close + 1));
  char state = 0;
  if (!(head >> info.pid) || !(tail >> state >> info.ppid >> info.group >> info.session))
    return std::nullopt;
  if (state == 'Z') return std::nullopt;  // ended, not yet reaped: nothing to act on
  return info;
}

}  // namespace

std::vector<ProcessInfo> ReadProcessTable(const fs::path& proc) {
  std::vector<ProcessInfo> table;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(proc, error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    // A process that ends between the open and the read fails the read (ESRCH): streaming the
    // buffer catches that, where reading the buffer directly would throw.
    std::ifstream in(entry.path() / "stat");
    std::ostringstream read;
    read << in.rdbuf();
    std::string text = read.str();
    if (auto info = ParseStat(text)) table.push_back(*info);
  }
  return table;
}

std::vector<ListedPid> AssignProcesses(const std::vector<ProcessInfo>& table,
                                       const std::vector<TrackedLeader>& leaders) {
  std::map<pid_t, const ProcessInfo*> by_pid;
  for (const ProcessInfo& process : table) by_pid[process.pid] = &process;
  std::map<pid_t, const TrackedLeader*> by_leader, by_group, by_session;
  for (const TrackedLeader& leader : leaders) {
    by_leader[leader.pid] = &leader;
    (leader.leads_session ? by_session : by_group)[leader.pid] = &leader;
  }
  // The leader a process belongs to: its own group's task, else its session's shell, else its
  // parent's (walked up a bounded number of generations: pids form no cycles, but a table read
  // while processes come and go may hold stale parents).
  auto owner = [&](const ProcessInfo& process) -> const TrackedLeader* {
    const ProcessInfo* at = &process;
    for (int depth = 0; at && depth < 256; ++depth) {
      if (auto it = by_leader.find(at->pid); it != by_leader.end()) return it->second;
      if (auto it = by_group.find(at->group); it != by_group.end()) return it->second;
      if (auto it = by_session.find(at->session); it != by_session.end()) return it->second;
      auto parent = by_pid.find(at->ppid);
      at = parent == by_pid.end() || at->ppid <= 1 ? nullptr : parent->second;
    }
    return nullptr;
  };
  std::vector<ListedPid> listed;
  for (const ProcessInfo& process : table) {
    const TrackedLeader* leader = owner(process);
    if (!leader) continue;
    bool is_leader = leader->pid == process.pid;
    listed.push_back({leader->job_id, leader->step_id, process.pid,
                      is_leader ? leader->local_task : -1, is_leader ? leader->global_task : -1});
  }
  auto key = [](const ListedPid& entry) {
    bool task = entry.local_task >= 0;
    return std::make_tuple(entry.job_id, entry.step_id, !task, entry.local_task, entry.pid);
  };
  std::sort(listed.begin(), listed.end(),
            [&](const ListedPid& a, const ListedPid& b) { return key(a) < key(b); });
  return listed;
}

}  // namespace drover::agent
