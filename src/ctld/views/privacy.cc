// See privacy.h.
#include "ctld/views/privacy.h"

namespace drover::ctld::views {

JobFilter VisibleJobs(JobFilter filter, const Caller& caller, const ClusterSettings& settings) {
  if (settings.private_data.jobs && !IsOperator(caller)) filter.uid = caller.uid;
  return filter;
}

bool SeesShare(const wire::ShareInfo& share, const Caller& caller,
               const ClusterSettings& settings) {
  if (!settings.private_data.usage || IsOperator(caller)) return true;
  return share.user.empty() || share.user == caller.user;
}

bool SeesReservations(const Caller& caller, const ClusterSettings& settings) {
  return !settings.private_data.reservations || IsOperator(caller);
}

}  // namespace drover::ctld::views
