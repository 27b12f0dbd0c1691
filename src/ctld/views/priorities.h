// The priority views: sprio (each pending job's priority and its factors, from the last
// scheduling cycle) and sshare (the fair-share tree), from one snapshot. Only read the snapshot;
// never speak gRPC.
#pragma once

#include <vector>

#include "ctld/engine/engine.h"
#include "ctld/engine/events.h"
#include "wire/read_model.h"

namespace drover::ctld::views {

// Pending jobs in the last cycle's priority order, with the configured weights. Held jobs (their
// priority is 0) are not listed, as in Slurm's sprio. `filter` narrows by job ID and user;
// PrivateData=jobs hides other users' jobs from `caller`.
wire::PriorityListing ListPriorities(const Snapshot& snapshot, const Caller& caller,
                                     const JobFilter& filter);

// Every association of the fair-share tree, accounts and users, in tree order; under
// PrivateData=usage a caller who is not an operator sees the accounts and only their own users.
std::vector<wire::ShareInfo> ListShares(const Snapshot& snapshot, const Caller& caller);

}  // namespace drover::ctld::views
