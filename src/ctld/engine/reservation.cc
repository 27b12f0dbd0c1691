// See reservation.h.
#include "ctld/engine/reservation.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "common/text.h"

namespace drover::ctld {
namespace {

// Slurm's reservation flags (scontrol(1), "Flags=").
constexpr std::array<std::string_view, 22> kFlags = {
    "ANY_NODES",    "DAILY",        "FLEX",
    "HOURLY",       "IGNORE_JOBS",  "LICENSE_ONLY",
    "MAGNETIC",     "MAINT",        "NO_HOLD_JOBS_AFTER",
    "OVERLAP",      "PART_NODES",   "PURGE_COMP",
    "REPLACE",      "REPLACE_DOWN", "SPEC_NODES",
    "STATIC_ALLOC", "TIME_FLOAT",   "USER_DELETE",
    "WEEKDAY",      "WEEKEND",      "WEEKLY",
    "FIRST_CORES"};

std::string ToUpperText(std::string_view text) {
  std::string upper(text);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper;
}

}  // namespace

bool Reservation::Overlaps(const Reservation& other) const {
  if (start_time >= other.end_time || other.start_time >= end_time) return false;
  for (int node : nodes)
    if (std::binary_search(other.nodes.begin(), other.nodes.end(), node)) return true;
  return false;
}

Status ApplyReservationFlags(std::string_view text, std::set<std::string>& flags) {
  for (const std::string& part : Split(text, ',')) {
    std::string_view word = Trim(part);
    if (word.empty()) continue;
    bool remove = word.front() == '-';
    if (word.front() == '+' || word.front() == '-') word.remove_prefix(1);
    std::string flag = ToUpperText(word);
    if (std::find(kFlags.begin(), kFlags.end(), flag) == kFlags.end()) {
      std::vector<std::string> known(kFlags.begin(), kFlags.end());
      return MakeError(
          fmt::format("Invalid reservation flag \"{}\"; known flags: {}", word, Join(known, ",")));
    }
    if (remove)
      flags.erase(flag);
    else
      flags.insert(flag);
  }
  return OkStatus();
}

namespace {

// The nodes a reservation may take, ascending: its partition's, or every node.
Result<std::vector<int>> CandidateNodes(const ClusterConfig& cluster,
                                        const Reservation& reservation) {
  std::vector<int> candidates;
  if (!reservation.partition.empty()) {
    int p = cluster.FindPartition(reservation.partition);
    if (p < 0) return MakeError("Invalid partition name specified: " + reservation.partition);
    candidates = cluster.partitions[p].nodes;
  } else {
    for (size_t i = 0; i < cluster.nodes.size(); ++i) candidates.push_back(static_cast<int>(i));
  }
  std::sort(candidates.begin(), candidates.end());
  return candidates;
}

// GPUs wanted, from TRES (whole nodes are reserved until enough GPUs are covered); a node count
// there replaces `count`.
Result<uint64_t> GpusWanted(const std::optional<std::string>& tres,
                            std::optional<uint32_t>& count) {
  uint64_t gpus_wanted = 0;
  if (!tres) return gpus_wanted;
  for (const std::string& part : Split(*tres, ',')) {
    std::string item = ToLower(Trim(part));
    size_t eq = item.find('=');
    auto value = eq == std::string::npos ? std::nullopt : ParseUint64(item.substr(eq + 1));
    std::string key = eq == std::string::npos ? item : item.substr(0, eq);
    if (!value || *value == 0)
      return MakeError(fmt::format(
          "Invalid Trackable RESource (TRES) specification \"{}\" (use e.g. TRES=gres/gpu=16 "
          "or TRES=node=4)",
          part));
    if (key == "gres/gpu" || key.starts_with("gres/gpu:"))
      gpus_wanted += *value;
    else if (key == "node")
      count = static_cast<uint32_t>(*value);
    else
      return MakeError(fmt::format(
          "Invalid Trackable RESource (TRES) specification \"{}\": reservations take node or "
          "gres/gpu counts",
          part));
  }
  return gpus_wanted;
}

// Another reservation holds the node at the same time (neither may overlap).
bool HeldByAnother(const Reservation& reservation, int node, const ReservationMap& others) {
  Reservation probe = reservation;
  probe.nodes = {node};
  for (const auto& [name, other] : others)
    if (name != reservation.name && probe.Overlaps(other) && !other.Has("OVERLAP") &&
        !other.Has("MAINT") && !reservation.Has("OVERLAP") && !reservation.Has("MAINT"))
      return true;
  return false;
}

}  // namespace

Result<std::vector<int>> PickReservationNodes(const ClusterConfig& cluster,
                                              const Reservation& reservation,
                                              std::optional<uint32_t> count,
                                              const std::optional<std::string>& tres,
                                              const ReservationMap& others,
                                              const std::vector<bool>& busy) {
  Result<std::vector<int>> candidates = CandidateNodes(cluster, reservation);
  if (!candidates) return std::move(candidates).take_error();
  Result<uint64_t> wanted = GpusWanted(tres, count);
  if (!wanted) return std::move(wanted).take_error();
  const uint64_t gpus_wanted = *wanted;
  std::vector<int> free_nodes, busy_nodes;
  for (int node : *candidates) {
    if (HeldByAnother(reservation, node, others)) continue;
    if (gpus_wanted && cluster.nodes[node].gpus.empty()) continue;
    (static_cast<size_t>(node) < busy.size() && busy[node] ? busy_nodes : free_nodes)
        .push_back(node);
  }
  free_nodes.insert(free_nodes.end(), busy_nodes.begin(), busy_nodes.end());
  std::vector<int> picked;
  uint64_t gpus = 0;
  for (int node : free_nodes) {
    if (gpus_wanted ? gpus >= gpus_wanted : picked.size() >= count.value_or(0)) break;
    picked.push_back(node);
    gpus += cluster.nodes[node].gpus.size();
  }
  bool enough = gpus_wanted ? gpus >= gpus_wanted : picked.size() >= count.value_or(0);
  if (!enough || picked.empty())
    return MakeError(fmt::format(
        "Requested nodes are busy ({} free of other reservations{}; ask for fewer, or another "
        "time or partition)",
        free_nodes.size(), gpus_wanted ? fmt::format(", {} GPUs wanted", gpus_wanted) : ""));
  std::sort(picked.begin(), picked.end());
  return picked;
}

int64_t Reservation::RepeatSeconds() const {
  return Has("HOURLY") ? 3600 : Has("DAILY") ? 86400 : Has("WEEKLY") ? 7 * 86400 : 0;
}

namespace {

// Slurm's Users=/Accounts= lists: a name admits, "-name" excludes (Users=-bob: all but bob).
struct AccessList {
  bool lists_admitted = false, admitted = false, excluded = false;
};

AccessList Check(const std::vector<std::string>& list, const std::string& name) {
  AccessList result;
  for (const std::string& entry : list) {
    if (!entry.empty() && entry.front() == '-') {
      result.excluded |= entry.substr(1) == name;
    } else {
      result.lists_admitted = true;
      result.admitted |= entry == name;
    }
  }
  return result;
}

}  // namespace

bool Reservation::Admits(const std::string& user, const std::string& account) const {
  AccessList by_user = Check(users, user), by_account = Check(accounts, account);
  if (by_user.excluded || by_account.excluded) return false;
  if (!by_user.lists_admitted && !by_account.lists_admitted) return true;
  return by_user.admitted || by_account.admitted;
}

}  // namespace drover::ctld
