// See reservation_codec.h.
#include "wire/reservation_codec.h"

namespace drover::wire {

void ToProto(const ReservationInfo& reservation, v1::Reservation* out) {
  out->set_name(reservation.name);
  out->set_start_time(reservation.start_time);
  out->set_end_time(reservation.end_time);
  out->set_node_list(reservation.node_list);
  out->mutable_nodes()->Add(reservation.nodes.begin(), reservation.nodes.end());
  out->mutable_users()->Add(reservation.users.begin(), reservation.users.end());
  out->mutable_accounts()->Add(reservation.accounts.begin(), reservation.accounts.end());
  out->mutable_flags()->Add(reservation.flags.begin(), reservation.flags.end());
  out->set_partition(reservation.partition);
  out->set_tres(reservation.tres);
  out->set_created_by(reservation.created_by);
}

void ToProto(const ReservationListing& listing, v1::ReservationList* out) {
  out->set_time(listing.time);
  for (const ReservationInfo& reservation : listing.reservations)
    ToProto(reservation, out->add_reservations());
}

}  // namespace drover::wire
