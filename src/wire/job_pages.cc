// See job_pages.h.
#include "wire/job_pages.h"

#include <chrono>
#include <string>
#include <utility>

namespace drover::wire {

grpc::Status ListJobPages(const JobPageCall& call, v1::JobQuery query, v1::JobList* list) {
  list->Clear();
  for (bool first = true;; first = false) {
    v1::JobList page;
    grpc::Status status = call(query, &page);
    if (!status.ok()) {
      list->Clear();  // never a part of the listing taken for the whole
      return status;
    }
    if (first) list->set_time(page.time());
    for (std::string& job : *page.mutable_jobs()) list->add_jobs(std::move(job));
    for (v1::PlannedStart& plan : *page.mutable_planned()) *list->add_planned() = std::move(plan);
    if (page.more_after() == 0) return grpc::Status::OK;
    if (page.more_after() <= query.after()) {
      list->Clear();
      return grpc::Status(grpc::StatusCode::INTERNAL, "the controller's listing went back to job " +
                                                          std::to_string(page.more_after()) +
                                                          " after job " +
                                                          std::to_string(query.after()));
    }
    query.set_after(page.more_after());
  }
}

grpc::Status ListJobPages(v1::Controller::Stub& stub, const v1::JobQuery& query, v1::JobList* list,
                          int deadline_seconds) {
  return ListJobPages(
      [&stub, deadline_seconds](const v1::JobQuery& page, v1::JobList* reply) {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() +
                             std::chrono::seconds(deadline_seconds));
        return stub.ListJobs(&context, page, reply);
      },
      query, list);
}

}  // namespace drover::wire
