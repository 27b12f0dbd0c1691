// Advance reservations as the controller keeps them: named windows on nodes for some users or
// accounts. The engine creates, updates, deletes and expires them and persists every change;
// what they mean to the scheduler (who may run there, backfill around them) is the scheduler's.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/cluster_config.h"
#include "common/result.h"

namespace drover::ctld {

struct Reservation {
  std::string name;
  int64_t start_time = 0, end_time = 0;
  std::vector<int> nodes;  // indexes into the configuration's nodes, ascending
  std::vector<std::string> users, accounts;
  std::set<std::string> flags;  // upper case: MAINT, IGNORE_JOBS, DAILY, ...
  std::string partition;
  std::string tres;  // as requested
  uint32_t created_by = 0;

  bool Has(std::string_view flag) const { return flags.count(std::string(flag)) > 0; }
  int64_t RepeatSeconds() const;  // DAILY, WEEKLY, HOURLY: the period; 0 for a single window
  bool Admits(const std::string& user, const std::string& account) const;
  bool Overlaps(const Reservation& other) const;  // in time and on at least one node
};

using ReservationMap = std::map<std::string, Reservation>;

// The request's fields; only those set are applied (an update changes only them).
struct ReservationFields {
  std::optional<int64_t> start_time, end_time, duration_seconds;
  std::optional<std::string> node_list;
  std::optional<uint32_t> node_count;
  std::optional<std::string> tres;
  std::optional<std::string> users, accounts, flags, partition;
};

// Flags as scontrol takes them ("MAINT,IGNORE_JOBS"; "+DAILY"/"-DAILY" on update), applied to
// `flags`. Unknown names are an error that lists the known ones.
Status ApplyReservationFlags(std::string_view text, std::set<std::string>& flags);

// Which nodes a reservation for `count` nodes (or the GPUs of `tres`, e.g. "gres/gpu=16")
// takes: nodes of the partition (all nodes without one) that no overlapping reservation
// holds, idle ones first (`busy` says which have jobs), in configuration order.
Result<std::vector<int>> PickReservationNodes(const ClusterConfig& cluster,
                                              const Reservation& reservation,
                                              std::optional<uint32_t> count,
                                              const std::optional<std::string>& tres,
                                              const ReservationMap& others,
                                              const std::vector<bool>& busy);

}  // namespace drover::ctld
