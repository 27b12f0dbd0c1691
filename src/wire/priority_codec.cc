// See priority_codec.h.
#include "wire/priority_codec.h"

namespace drover::wire {

void ToProto(const JobPriorityInfo& priority, v1::JobPriority* out) {
  out->set_job_id(priority.job_id);
  out->set_user(priority.user);
  out->set_account(priority.account);
  out->set_partition(priority.partition);
  out->set_priority(priority.priority);
  out->set_age(priority.age);
  out->set_fairshare(priority.fairshare);
  out->set_job_size(priority.job_size);
  out->set_partition_factor(priority.partition_factor);
  out->set_qos(priority.qos);
  out->set_assoc(priority.assoc);
  out->set_nice(priority.nice);
  for (const auto& [name, value] : priority.tres) (*out->mutable_tres())[name] = value;
}

void ToProto(const PriorityListing& listing, v1::PriorityList* out) {
  for (const JobPriorityInfo& priority : listing.jobs) ToProto(priority, out->add_jobs());
  for (const auto& [name, weight] : listing.weights) (*out->mutable_weights())[name] = weight;
}

void ToProto(const ShareInfo& share, v1::Share* out) {
  out->set_account(share.account);
  out->set_user(share.user);
  if (!share.parent.empty()) out->set_parent(share.parent);
  out->set_raw_shares(share.raw_shares);
  out->set_raw_usage(share.raw_usage);
  out->set_norm_shares(share.norm_shares);
  out->set_norm_usage(share.norm_usage);
  out->set_effective_usage(share.effective_usage);
  out->set_level_fs(share.level_fs);
  out->set_fairshare(share.fairshare);
  out->set_grp_tres_mins(share.grp_tres_mins);
  out->set_tres_run_mins(share.tres_run_mins);
  out->set_grp_tres_raw(share.grp_tres_raw);
}

void ToProto(const std::vector<ShareInfo>& shares, v1::ShareList* out) {
  for (const ShareInfo& share : shares) ToProto(share, out->add_shares());
}

}  // namespace drover::wire
