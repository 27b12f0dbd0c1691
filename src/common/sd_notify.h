// systemd's readiness protocol (sd_notify(3)) without libsystemd: one datagram of
// "KEY=VALUE\n" lines to the socket $NOTIFY_SOCKET names (a path, or "@name" in the abstract
// namespace). Units with Type=notify wait for "READY=1"; elsewhere (no $NOTIFY_SOCKET) this does
// nothing.
#pragma once

#include <string>

namespace drover {

// Sends `state` ("READY=1\nSTATUS=...") to systemd; false when there is no socket or it failed.
bool NotifySystemd(const std::string& state);

}  // namespace drover
