// gRPC metadata the commands and the controller agree on besides the credential.
#pragma once

namespace drover::wire {

// On a JobScript call: the script as the controller keeps it for a job still in its queue
// (scontrol write batch_script, as slurmctld answers it), whatever AccountingStoreFlags keeps
// for accounting (sacct -B, which leaves it out).
inline constexpr char kLiveScriptKey[] = "x-drover-live-script";

}  // namespace drover::wire
