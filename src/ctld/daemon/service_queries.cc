// The service's queries; see service.h. Each reads the latest snapshot through a view
// (ctld/views) and builds its reply with a wire codec; none waits for the engine.
#include <unistd.h>

#include "common/log.h"
#include "common/resource_limits.h"
#include "common/retention.h"
#include "ctld/daemon/requests.h"
#include "ctld/daemon/service.h"
#include "ctld/records.h"
#include "ctld/views/history.h"
#include "ctld/views/jobs.h"
#include "ctld/views/nodes.h"
#include "ctld/views/partitions.h"
#include "ctld/views/priorities.h"
#include "ctld/views/reservations.h"
#include "wire/job_listing_codec.h"
#include "wire/metadata.h"
#include "wire/node_codec.h"
#include "wire/partition_codec.h"
#include "wire/priority_codec.h"
#include "wire/reservation_codec.h"

namespace drover::ctld {

ControllerService::Reactor* ControllerService::Query(Context* context, const Caller& caller,
                                                     std::function<grpc::Status()> query) {
  Reactor* reactor = context->DefaultReactor();
  if (!queries_.Run([reactor, query = std::move(query)] { reactor->Finish(query()); })) {
    HoldForRetry(context, caller);  // the command retries
    reactor->Finish(Busy(kQueriesBusy));
  }
  return reactor;
}

ControllerService::Reactor* ControllerService::ListJobs(Context* context, const v1::JobQuery* query,
                                                        v1::JobList* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  return Query(context, caller,
               [this, caller, query, reply] { return DoListJobs(caller, query, reply); });
}

grpc::Status ControllerService::DoListJobs(const Caller& caller, const v1::JobQuery* query,
                                           v1::JobList* reply) {
  std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();
  auto filter = FilterOf(query->filter());
  if (!filter) return Invalid(filter.error());
  views::JobPage page{query->after(), views::kJobsPerPage};
  if (query->limit() > 0) page.limit = std::min<size_t>(page.limit, query->limit());
  views::JobSelection selection =
      views::SelectJobs(*snapshot, caller, *filter, query->all_states(), query->with_plan(),
                        query->holding_nodes(), page);
  wire::JobListing listing{
      selection.time, {}, std::move(selection.planned), {}, selection.more_after};
  // A page also ends before it passes views::kJobPageBytes (records with long fields), after one
  // job at least; the rest of the selection comes with the next page.
  size_t bytes = 0;
  for (const JobPtr& job : selection.jobs) {
    std::shared_ptr<const std::string> record = CachedJob(*job, *snapshot->cluster);
    if (!listing.jobs.empty() && bytes + record->size() > views::kJobPageBytes) {
      listing.more_after = selection.jobs[listing.jobs.size() - 1]->spec.job_id;
      std::erase_if(listing.planned, [&](const wire::PlannedStartInfo& planned) {
        return planned.job_id > listing.more_after;
      });
      break;
    }
    bytes += record->size();
    listing.jobs.push_back(std::move(record));
  }
  wire::ToProto(listing, reply);
  return grpc::Status::OK;
}

ControllerService::Reactor* ControllerService::History(Context* context,
                                                       const v1::HistoryQuery* query,
                                                       v1::JobList* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  return Query(context, caller,
               [this, caller, query, reply] { return DoHistory(caller, query, reply); });
}

grpc::Status ControllerService::DoHistory(const Caller& caller, const v1::HistoryQuery* query,
                                          v1::JobList* reply) {
  auto filter = FilterOf(query->filter());
  if (!filter) return Invalid(filter.error());
  if (static_cast<size_t>(query->uids_size()) > views::kMaxHistoryUids)
    return Invalid(fmt::format("a history query names {} users; at most {} may be named",
                               query->uids_size(), views::kMaxHistoryUids));
  std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();
  views::HistoryQuery history{std::move(*filter), query->start_time(), query->end_time()};
  history.uids.assign(query->uids().begin(), query->uids().end());
  auto page = history_.Find(*snapshot, caller, std::move(history), query->after(), query->limit());
  if (!page) return grpc::Status(grpc::StatusCode::INTERNAL, page.error());
  page->listing.next = page->next;
  wire::ToProto(page->listing, reply);
  return grpc::Status::OK;
}

void ControllerService::PurgeHistoryIfDue(int64_t now) {
  std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();
  const Retention& retention = snapshot->cluster->settings.purge_job_after;
  if (!retention.enabled()) return;
  int64_t cutoff = RetentionCutoff(retention, now);
  if (cutoff <= purged_up_to_) return;
  std::set<uint64_t> live_arrays;
  for (const JobPtr& job : snapshot->jobs)
    if (job->spec.array_job_id) live_arrays.insert(job->spec.array_job_id);
  auto purged = history_.Purge(cutoff, live_arrays);
  if (!purged) {
    log::Error("PurgeJobAfter: the job history could not be purged (tried again in a minute): {}",
               purged.error());
    return;
  }
  purged_up_to_ = cutoff;
  if (*purged)
    log::Info("PurgeJobAfter: purged {} jobs submitted before Unix time {} from the job history",
              *purged, cutoff + 1);
}

ControllerService::Reactor* ControllerService::JobScript(Context* context,
                                                         const v1::JobScriptRequest* request,
                                                         v1::JobScriptReply* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  const auto& metadata = context->client_metadata();
  bool live = metadata.find(wire::kLiveScriptKey) != metadata.end();
  return Query(context, caller, [this, caller, request, reply, live] {
    return DoJobScript(caller, request, reply, live);
  });
}

// As slurmdbd: the job's owner or an operator, and only what AccountingStoreFlags keeps. The
// reply is bounded by what a submission may carry (max_script_size, the environment's bounds).
// `live` (scontrol write batch_script): as slurmctld, a job still in the queue, whose script
// is kept whatever AccountingStoreFlags says.
grpc::Status ControllerService::DoJobScript(const Caller& caller,
                                            const v1::JobScriptRequest* request,
                                            v1::JobScriptReply* reply, bool live) {
  std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();
  if (live && !snapshot->jobs.Find(request->job_id()))
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        "Invalid job id specified: " + std::to_string(request->job_id()));
  auto owner = history_.FindOwner(*snapshot, request->job_id());
  if (!owner) return grpc::Status(grpc::StatusCode::INTERNAL, owner.error());
  if (!*owner)
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        "Invalid job id specified: " + std::to_string(request->job_id()));
  if ((*owner)->uid != caller.uid && !IsOperator(caller))
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "Access/permission denied: job " +
                                                                 std::to_string(request->job_id()) +
                                                                 " belongs to another user");
  const ClusterSettings& settings = snapshot->cluster->settings;
  bool environment = request->environment();
  if (!live && !(environment ? settings.store_job_env : settings.store_job_script))
    return grpc::Status::OK;
  auto stored = history_.Stored(environment ? "environments" : "scripts", (*owner)->script_id);
  if (!stored) return grpc::Status(grpc::StatusCode::INTERNAL, stored.error());
  if (!*stored) return grpc::Status::OK;
  reply->set_found(true);
  if (!environment) {
    reply->set_script(std::move(**stored));
  } else {
    for (std::string& entry : DecodeEnvironment(**stored))
      if (!entry.starts_with(kStoredLimitPrefix)) reply->add_environment(std::move(entry));
  }
  return grpc::Status::OK;
}

ControllerService::Reactor* ControllerService::Priorities(Context* context,
                                                          const v1::PriorityQuery* query,
                                                          v1::PriorityList* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  return Query(context, caller,
               [this, caller, query, reply] { return DoPriorities(caller, query, reply); });
}

grpc::Status ControllerService::DoPriorities(const Caller& caller, const v1::PriorityQuery* query,
                                             v1::PriorityList* reply) {
  auto filter = FilterOf(query->filter());
  if (!filter) return Invalid(filter.error());
  wire::ToProto(views::ListPriorities(*loop_.snapshot(), caller, *filter), reply);
  return grpc::Status::OK;
}

ControllerService::Reactor* ControllerService::Shares(Context* context, const v1::ShareQuery*,
                                                      v1::ShareList* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  return Query(context, caller, [this, caller, reply] { return DoShares(caller, reply); });
}

grpc::Status ControllerService::DoShares(const Caller& caller, v1::ShareList* reply) {
  wire::ToProto(views::ListShares(*loop_.snapshot(), caller), reply);
  return grpc::Status::OK;
}

ControllerService::Reactor* ControllerService::ListNodes(Context* context,
                                                         const v1::NodeQuery* query,
                                                         v1::NodeList* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  return Query(context, caller, [this, query, reply] { return DoListNodes(query, reply); });
}

grpc::Status ControllerService::DoListNodes(const v1::NodeQuery* query, v1::NodeList* reply) {
  constexpr int kMostNames = 100'000;
  if (query->names_size() > kMostNames)
    return Invalid(fmt::format("a node query names {} nodes; at most {} may be named",
                               query->names_size(), kMostNames));
  std::vector<std::string> names(query->names().begin(), query->names().end());
  std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();
  wire::NodeListing listing = views::ListNodes(*snapshot, names);
  // Nodes asked for by name get their agents' addresses (sstat calls them).
  if (agents_ && !names.empty())
    for (wire::NodeInfo& node : listing.nodes)
      if (int index = snapshot->cluster->FindNode(node.name); index >= 0)
        node.agent_address = agents_->AddressOf(index);
  wire::ToProto(listing, reply);
  return grpc::Status::OK;
}

ControllerService::Reactor* ControllerService::ListPartitions(Context* context,
                                                              const v1::PartitionQuery* query,
                                                              v1::PartitionList* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  bool configuration_only = query->configuration_only();
  return Query(context, caller, [this, reply, configuration_only] {
    return DoListPartitions(configuration_only, reply);
  });
}

grpc::Status ControllerService::DoListPartitions(bool configuration_only,
                                                 v1::PartitionList* reply) {
  wire::ToProto(views::ListPartitions(*loop_.snapshot(), configuration_only), reply);
  return grpc::Status::OK;
}

ControllerService::Reactor* ControllerService::ListReservations(Context* context,
                                                                const v1::ReservationQuery* query,
                                                                v1::ReservationList* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  return Query(context, caller,
               [this, caller, query, reply] { return DoListReservations(caller, query, reply); });
}

grpc::Status ControllerService::DoListReservations(const Caller& caller,
                                                   const v1::ReservationQuery* query,
                                                   v1::ReservationList* reply) {
  wire::ReservationListing listing =
      views::ListReservations(*loop_.snapshot(), caller, query->name());
  if (!query->name().empty() && listing.reservations.empty())
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "Reservation " + query->name() + " not found");
  wire::ToProto(listing, reply);
  return grpc::Status::OK;
}

ControllerService::Reactor* ControllerService::Ping(Context* context, const v1::PingRequest*,
                                                    v1::PingReply* reply) {
  Caller caller;
  if (grpc::Status refused = Admit(context, Access::kUser, caller); !refused.ok())
    return Finished(context, refused);
  std::shared_ptr<const Snapshot> snapshot = loop_.snapshot();
  reply->set_cluster_name(snapshot->cluster->settings.cluster_name);
  if (name_.empty()) {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    reply->set_host(host);
  } else {
    reply->set_host(name_);
  }
  reply->set_time(snapshot->time);
  reply->set_jobs(snapshot->jobs.size());
  reply->set_caller_user(caller.user);
  reply->set_caller_operator(IsOperator(caller));
  return Finished(context, grpc::Status::OK);
}

}  // namespace drover::ctld
