// Suspend/resume and advance reservations: operator requests that change running jobs' clocks
// and the nodes' future.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <csignal>

#include "common/hostlist.h"
#include "common/text.h"
#include "ctld/engine/engine.h"

namespace drover::ctld {
namespace {

Reply Refusal(uint64_t token, std::string error) {
  return Reply{token, false, std::move(error), {}, {}};
}

std::vector<std::string> NameList(std::string_view text) {
  std::vector<std::string> names;
  for (const std::string& part : Split(text, ','))
    if (std::string_view name = Trim(part); !name.empty()) names.emplace_back(name);
  return names;
}

}  // namespace

void Engine::On(const SuspendJobs& event, EngineOutput& out) {
  if (!IsOperator(event.caller))
    return out.effects.push_back(Refusal(event.token, "Access/permission denied"));
  ActOnJobs(event.token, event.caller, event.filter, out,
            [&](uint64_t id, const Job& current, size_t) -> std::optional<std::string> {
              int64_t now = clock_.Now();
              if (event.resume) {
                if (current.state != JobState::kSuspended) return "Job is not suspended";
              } else if (current.state == JobState::kPending) {
                return "Job is pending execution";
              } else if (current.state != JobState::kRunning) {
                return current.state == JobState::kSuspended ? "Job is current suspended, "
                                                               "requested operation disabled"
                                                             : "Job is not running";
              }
              Job& job = Mutable(id, out);
              std::vector<int> nodes = job.NodeIndexes();
              if (event.resume) {
                int64_t paused = std::max<int64_t>(now - job.suspend_time, 0);
                job.suspended_seconds += paused;
                if (job.end_time < kUnlimitedSeconds) job.end_time += paused;
                job.state = JobState::kRunning;
                out.effects.push_back(SignalJob{id, nodes, SIGCONT, SignalScope::kFull});
              } else {
                job.state = JobState::kSuspended;
                out.effects.push_back(SignalJob{id, nodes, SIGSTOP, SignalScope::kFull});
              }
              job.suspend_time = now;
              return std::nullopt;
            });
}

const Reservation* Engine::FindReservation(const std::string& name) const {
  auto it = reservations_->find(name);
  return it == reservations_->end() ? nullptr : &it->second;
}

ReservationMap& Engine::MutableReservations() {
  if (reservations_.use_count() > 1)
    reservations_ = std::make_shared<ReservationMap>(*reservations_);
  else
    std::atomic_thread_fence(std::memory_order_acquire);  // see JobTable::Writable
  return *reservations_;
}

void Engine::RestoreReservation(Reservation reservation) {
  std::string name = reservation.name;
  MutableReservations()[name] = std::move(reservation);
}

namespace {

// The reservation's window from the fields; the refusal in Slurm's words, or "".
std::string ApplyWindow(const ReservationFields& fields, Reservation& reservation, int64_t now) {
  int64_t length = reservation.end_time - reservation.start_time;
  if (fields.start_time) reservation.start_time = std::max(*fields.start_time, int64_t{0});
  if (fields.end_time)
    reservation.end_time = *fields.end_time;
  else if (fields.duration_seconds)
    reservation.end_time = *fields.duration_seconds >= kUnlimitedSeconds - reservation.start_time
                               ? kUnlimitedSeconds
                               : reservation.start_time + *fields.duration_seconds;
  else if (fields.start_time && length > 0)  // a moved reservation keeps its length
    reservation.end_time = reservation.start_time + length;
  if (reservation.start_time == 0) return "Invalid time specified (give StartTime=now or a time)";
  if (reservation.end_time <= reservation.start_time)
    return "Invalid time specified (EndTime must be after StartTime; or give Duration)";
  if (reservation.end_time <= now) return "Invalid time specified (the reservation would be over)";
  return "";
}

// Nodes= as node indexes, ascending and once each.
Result<std::vector<int>> NamedNodes(const std::string& node_list, const ClusterConfig& cluster) {
  auto names = ExpandHostlist(node_list);
  if (!names) return MakeError("Invalid node name specified: " + names.error());
  std::vector<int> nodes;
  for (const std::string& name : *names) {
    int index = cluster.FindNode(name);
    if (index < 0) return MakeError("Invalid node name specified: " + name);
    nodes.push_back(index);
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

// Another reservation it may not overlap, or (starting now, without IGNORE_JOBS) a node running
// jobs: the refusal, or "".
std::string Conflict(const Reservation& reservation, const ReservationMap& reservations,
                     const std::vector<NodeStatus>& nodes, const ClusterConfig& cluster,
                     int64_t now) {
  if (!reservation.Has("OVERLAP") && !reservation.Has("MAINT"))
    for (const auto& [name, other] : reservations)
      if (name != reservation.name && !other.Has("OVERLAP") && !other.Has("MAINT") &&
          reservation.Overlaps(other))
        return fmt::format("Requested reservation overlaps with another reservation ({})", name);
  if (reservation.start_time <= now && !reservation.Has("IGNORE_JOBS") && !reservation.Has("MAINT"))
    for (int node : reservation.nodes)
      if (!nodes[node].jobs.empty())
        return fmt::format(
            "Requested nodes are busy ({} runs jobs; add Flags=IGNORE_JOBS or start later)",
            cluster.nodes[node].name);
  return "";
}

}  // namespace

std::string Engine::ApplyReservation(const ReservationFields& fields,
                                     Reservation& reservation) const {
  int64_t now = clock_.Now();
  if (fields.flags)
    if (Status applied = ApplyReservationFlags(*fields.flags, reservation.flags); !applied)
      return applied.error();
  if (fields.partition) {
    if (!fields.partition->empty() && cluster().FindPartition(*fields.partition) < 0)
      return "Invalid partition name specified";
    reservation.partition = *fields.partition;
  }
  if (fields.users) reservation.users = NameList(*fields.users);
  if (fields.accounts) reservation.accounts = NameList(*fields.accounts);
  if (reservation.users.empty() && reservation.accounts.empty())
    return "Reservation request lacks users, groups or accounts";
  if (std::string refusal = ApplyWindow(fields, reservation, now); !refusal.empty()) return refusal;
  if (fields.node_list) {
    Result<std::vector<int>> nodes = NamedNodes(*fields.node_list, cluster());
    if (!nodes) return nodes.error();
    reservation.nodes = std::move(*nodes);
  } else if (fields.node_count || fields.tres) {
    std::vector<bool> busy(nodes_.size());
    for (size_t i = 0; i < nodes_.size(); ++i) busy[i] = !nodes_[i].jobs.empty();
    auto picked = PickReservationNodes(cluster(), reservation, fields.node_count, fields.tres,
                                       *reservations_, busy);
    if (!picked) return picked.error();
    reservation.nodes = std::move(*picked);
    if (fields.tres) reservation.tres = *fields.tres;
  }
  if (reservation.nodes.empty()) return "Requested nodes are busy (give Nodes=, NodeCnt= or TRES=)";
  return Conflict(reservation, *reservations_, nodes_, cluster(), now);
}

void Engine::On(const CreateReservation& event, EngineOutput& out) {
  if (!IsOperator(event.caller))
    return out.effects.push_back(Refusal(event.token, "Access/permission denied"));
  Reservation reservation;
  reservation.name = event.name;
  reservation.created_by = event.caller.uid;
  if (!reservation.name.empty() && reservations_->count(reservation.name))
    return out.effects.push_back(Refusal(event.token, "Duplicate reservation name"));
  if (reservation.name.empty()) {
    // Slurm names it after the first user or account, with a number.
    std::vector<std::string> owners =
        NameList(event.fields.users.value_or(event.fields.accounts.value_or("")));
    std::string base = owners.empty() ? "resv" : owners.front();
    if (!base.empty() && base.front() == '-') base.erase(0, 1);
    do {
      reservation.name = fmt::format("{}_{}", base, next_reservation_++);
    } while (reservations_->count(reservation.name));
  }
  if (std::string error = ApplyReservation(event.fields, reservation); !error.empty())
    return out.effects.push_back(Refusal(event.token, std::move(error)));
  std::string name = reservation.name;
  MutableReservations()[name] = std::move(reservation);
  out.changed_reservations.push_back(name);
  out.effects.push_back(Reply{event.token, true, "", {}, name});
  schedule_requested_ = true;
}

void Engine::On(const UpdateReservation& event, EngineOutput& out) {
  if (!IsOperator(event.caller))
    return out.effects.push_back(Refusal(event.token, "Access/permission denied"));
  const Reservation* current = FindReservation(event.name);
  if (!current)
    return out.effects.push_back(Refusal(event.token, "Requested reservation is invalid"));
  Reservation updated = *current;
  if (std::string error = ApplyReservation(event.fields, updated); !error.empty())
    return out.effects.push_back(Refusal(event.token, std::move(error)));
  MutableReservations()[event.name] = std::move(updated);
  out.changed_reservations.push_back(event.name);
  out.effects.push_back(Reply{event.token, true, "", {}, event.name});
  schedule_requested_ = true;
}

void Engine::On(const DeleteReservation& event, EngineOutput& out) {
  if (!IsOperator(event.caller))
    return out.effects.push_back(Refusal(event.token, "Access/permission denied"));
  if (!FindReservation(event.name))
    return out.effects.push_back(Refusal(event.token, "Requested reservation is invalid"));
  for (const auto& [id, job] : jobs_)
    if (job->spec.reservation == event.name && !IsFinal(job->state))
      return out.effects.push_back(Refusal(
          event.token,
          fmt::format("Requested reservation is in use (job {} uses it; cancel it or move it "
                      "out with scontrol update job {} Reservation=)",
                      id, id)));
  MutableReservations().erase(event.name);
  out.deleted_reservations.push_back(event.name);
  out.effects.push_back(Reply{event.token, true, "", {}, event.name});
  schedule_requested_ = true;
}

// A reservation past its end goes, unless it repeats: DAILY and WEEKLY ones move on.
void Engine::ExpireReservations(EngineOutput& out) {
  int64_t now = clock_.Now();
  std::vector<std::string> over;
  for (const auto& [name, reservation] : *reservations_)
    if (reservation.end_time <= now) over.push_back(name);
  for (const std::string& name : over) {
    ReservationMap& all = MutableReservations();
    Reservation& reservation = all.at(name);
    int64_t period = reservation.RepeatSeconds();
    if (period == 0) {
      all.erase(name);
      out.deleted_reservations.push_back(name);
      continue;
    }
    int64_t periods = (now - reservation.end_time) / period + 1;
    reservation.start_time += periods * period;
    reservation.end_time += periods * period;
    out.changed_reservations.push_back(name);
  }
  if (!over.empty()) schedule_requested_ = true;
}

}  // namespace drover::ctld
