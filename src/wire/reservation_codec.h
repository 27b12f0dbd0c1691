// The codec from the reservations read model (read_model.h) to v1::Reservation, for scontrol
// show reservation and the controller's stored reservation record. Layer 2: common and proto
// only. Converts; never decides.
#pragma once

#include "proto/drover.pb.h"
#include "wire/read_model.h"

namespace drover::wire {

void ToProto(const ReservationInfo& reservation, v1::Reservation* out);
void ToProto(const ReservationListing& listing, v1::ReservationList* out);

}  // namespace drover::wire
