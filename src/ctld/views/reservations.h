// The reservations view: scontrol show reservation, from one snapshot. Only reads the snapshot;
// never speaks gRPC.
#pragma once

#include <string>

#include "common/cluster_config.h"
#include "ctld/engine/engine.h"
#include "ctld/engine/reservation.h"
#include "wire/read_model.h"

namespace drover::ctld::views {

// Nodes by name, in the reservation's order, with their hostlist. The store's reservation record
// is this too (names outlive a reordered slurm.conf).
wire::ReservationInfo ReservationInfoOf(const Reservation& reservation,
                                        const ClusterConfig& cluster);

// The reservation called `name`, or every reservation when `name` is empty, by name; none for a
// caller who is not an operator under PrivateData=reservations.
wire::ReservationListing ListReservations(const Snapshot& snapshot, const Caller& caller,
                                          const std::string& name);

}  // namespace drover::ctld::views
