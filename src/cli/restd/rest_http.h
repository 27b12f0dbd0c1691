// The REST API and the web dashboard on a cpp-httplib server: Slurm's paths (rest_api.h), the
// OpenAPI document, the dashboard's API (dashboard.h) and its page (web_assets.h) at /ui/, with
// the bounds every request meets (body size, chunked or compressed bodies refused, slow clients
// cut off). Shared by `drover restd` and the controller's HTTP port. httplib stays out of this
// header.
#pragma once

#include <memory>
#include <string>

namespace httplib {
class Server;
}

namespace drover::cli::restd {

class RestApi;

constexpr size_t kMaxBodyBytes = 1 << 20;  // a job's script and environment fit many times over

// `log_prefix`: each request is logged on stderr as "PREFIX: METHOD PATH user=U STATUS"; empty:
// not logged.
void MountRestApi(httplib::Server& server, std::shared_ptr<RestApi> api, std::string log_prefix);

}  // namespace drover::cli::restd
