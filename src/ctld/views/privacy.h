// PrivateData (slurm.conf): what a caller who is not an operator may see of other users. Every
// view that lists jobs, usage or reservations asks here, so a query passes only its caller.
#pragma once

#include "common/cluster_config.h"
#include "ctld/engine/events.h"
#include "wire/read_model.h"

namespace drover::ctld::views {

// `filter` narrowed to the caller's own jobs under PrivateData=jobs (operators see all).
JobFilter VisibleJobs(JobFilter filter, const Caller& caller, const ClusterSettings& settings);

// PrivateData=usage: users see the accounts and their own user rows of the fair-share tree.
bool SeesShare(const wire::ShareInfo& share, const Caller& caller, const ClusterSettings& settings);

// PrivateData=reservations: reservations are shown to operators only, as in Slurm.
bool SeesReservations(const Caller& caller, const ClusterSettings& settings);

}  // namespace drover::ctld::views
