// The web dashboard's API, under /ui/api/ beside the REST API, with the same authentication (the
// request's token goes to the controller with every call, which answers as the token's user).
// Compact documents made for the page, not Slurm's: the queue a page at a time with server-side
// filters, the nodes with their GPU allocation and place in the topology, one job's timeline,
// the fair-share tree, the reservations and the scheduler's health. Operators (and only they)
// may also cancel, hold and release jobs and drain and resume nodes from the page.
//   GET  /ui/api/overview
//   GET  /ui/api/jobs?user=&account=&partition=&state=&limit=&after=
//   GET  /ui/api/job/{id}
//   GET  /ui/api/shares
//   GET  /ui/api/reservations
//   POST /ui/api/job/{id}/{cancel|hold|release}
//   POST /ui/api/node/{name}/{drain|resume}    body {"reason": "..."} for drain
// The page itself (index.html, app.js, app.css) is built into the server (web_assets.h).
#pragma once

#include "cli/restd/rest_api.h"

namespace drover::cli::restd {

// `request` has a well-formed token; its path starts with /ui/api/.
Response DashboardApi(RestApi& api, const Request& request);

// The most jobs one /ui/api/jobs answer carries.
constexpr uint32_t kDashboardMaxJobs = 5000;

}  // namespace drover::cli::restd
