// See reservations.h.
#include "ctld/views/reservations.h"

#include "common/hostlist.h"
#include "ctld/views/privacy.h"

namespace drover::ctld::views {

wire::ReservationInfo ReservationInfoOf(const Reservation& reservation,
                                        const ClusterConfig& cluster) {
  wire::ReservationInfo info;
  info.name = reservation.name;
  info.start_time = reservation.start_time;
  info.end_time = reservation.end_time;
  for (int node : reservation.nodes) info.nodes.push_back(cluster.nodes[node].name);
  info.node_list = CompressHostlistSorted(info.nodes);
  info.users = reservation.users;
  info.accounts = reservation.accounts;
  info.flags.assign(reservation.flags.begin(), reservation.flags.end());
  info.partition = reservation.partition;
  info.tres = reservation.tres;
  info.created_by = reservation.created_by;
  return info;
}

wire::ReservationListing ListReservations(const Snapshot& snapshot, const Caller& caller,
                                          const std::string& name) {
  wire::ReservationListing listing;
  listing.time = snapshot.time;
  if (!snapshot.reservations || !SeesReservations(caller, snapshot.cluster->settings))
    return listing;
  for (const auto& [key, reservation] : *snapshot.reservations)
    if (name.empty() || name == key)
      listing.reservations.push_back(ReservationInfoOf(reservation, *snapshot.cluster));
  return listing;
}

}  // namespace drover::ctld::views
