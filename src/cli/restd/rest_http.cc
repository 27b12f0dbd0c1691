// See rest_http.h.
#include "cli/restd/rest_http.h"

#include <httplib.h>

#include <exception>
#include <string>

#include <fmt/format.h>

#include "cli/restd/rest_api.h"
#include "cli/restd/web_assets.h"
#include "common/text.h"

namespace drover::cli::restd {
namespace {

Request RequestOf(const httplib::Request& in) {
  Request request;
  request.method = in.method;
  request.path = in.path;
  // The URL's query alone: httplib adds a form body's fields to `params`, and a body here is JSON
  // whatever Content-Type a client sends (curl -d says form).
  size_t question = in.target.find('?');
  if (question != std::string::npos) {
    httplib::Params params;
    httplib::detail::parse_query_text(in.target.substr(question + 1), params);
    for (const auto& [name, value] : params) request.query.emplace(name, value);
  }
  request.user = in.get_header_value("X-SLURM-USER-NAME");
  request.token = in.get_header_value("X-SLURM-USER-TOKEN");
  std::string authorization = in.get_header_value("Authorization");
  if (request.token.empty() && authorization.starts_with("Bearer "))
    request.token = authorization.substr(7);
  request.body = in.body;
  return request;
}

}  // namespace

void MountRestApi(httplib::Server& server, std::shared_ptr<RestApi> api, std::string log_prefix) {
  server.set_payload_max_length(kMaxBodyBytes);
  // A client that sends its request slowly holds a thread: not for long.
  server.set_read_timeout(10);
  server.set_write_timeout(30);
  server.set_keep_alive_timeout(5);
  server.set_keep_alive_max_count(100);
  // Before any body is read: only a body whose length is said and within the bound. httplib
  // bounds a body by its Content-Length alone, so a chunked or compressed one is refused here.
  server.set_pre_routing_handler([](const httplib::Request& in, httplib::Response& out) {
    // httplib answers a client that accepts Brotli with Brotli at its top quality, about half a
    // megabyte a second here: the dashboard's overview of 10,000 nodes took 3 s to compress
    // (gzip: 40 ms). Brotli is struck from what the client accepts, so gzip is used. httplib
    // hands the handler its own, non-const Request, so the change is well-defined.
    if (std::string accepted = in.get_header_value("Accept-Encoding");
        accepted.find("br") != std::string::npos) {
      std::string kept;
      for (const std::string& coding : Split(accepted, ',')) {
        std::string name = coding.substr(coding.find_first_not_of(' ') == std::string::npos
                                             ? coding.size()
                                             : coding.find_first_not_of(' '));
        if (name.starts_with("br")) continue;
        kept += (kept.empty() ? "" : ", ") + name;
      }
      auto& request = const_cast<httplib::Request&>(in);
      request.headers.erase("Accept-Encoding");
      if (!kept.empty()) request.headers.emplace("Accept-Encoding", kept);
    }
    auto refuse = [&out](int status, const std::string& message) {
      out.status = status;
      out.set_content(ErrorDocument(message, 9000), "application/json");
      return httplib::Server::HandlerResponse::Handled;
    };
    if (in.has_header("Transfer-Encoding"))
      return refuse(411, "send the body with a Content-Length (no chunked transfer)");
    std::string encoding = in.get_header_value("Content-Encoding");
    if (!encoding.empty() && encoding != "identity")
      return refuse(415, "send the body uncompressed (Content-Encoding: " + encoding + ")");
    std::optional<int64_t> length = ParseInt64(in.get_header_value("Content-Length"));
    if (length && (*length < 0 || static_cast<uint64_t>(*length) > kMaxBodyBytes))
      return refuse(413, fmt::format("the request body is over {} bytes", kMaxBodyBytes));
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // httplib's own refusals (a body over the limit, a request it cannot read) in Slurm's shape.
  server.set_error_handler([](const httplib::Request&, httplib::Response& out) {
    if (!out.body.empty()) return;
    std::string message = out.status == 413
                              ? fmt::format("the request body is over {} bytes", kMaxBodyBytes)
                              : fmt::format("the request could not be read (HTTP {})", out.status);
    out.set_content(ErrorDocument(message, out.status == 413 ? 9000 : -1), "application/json");
  });
  auto openapi = [](const httplib::Request&, httplib::Response& out) {
    out.set_content(OpenApiDocument(), "application/json");
  };
  for (const char* openapi_path : {"/openapi/v3", "/openapi", "/openapi.json"})
    server.Get(openapi_path, openapi);
  auto serve = [api, log_prefix](const httplib::Request& in, httplib::Response& out) {
    Request request = RequestOf(in);
    Response response;
    try {
      response = api->Handle(request);
    } catch (const std::exception& error) {  // a library's throw: this request fails alone
      response = Response{500, ErrorDocument(fmt::format("internal error: {}", error.what()), -1)};
    }
    out.status = response.status;
    out.set_content(response.body, "application/json");
    out.set_header("Cache-Control", "no-store");
    if (!log_prefix.empty())
      fmt::print(stderr, "{}: {} {} user={} {}\n", log_prefix, in.method, in.path,
                 request.user.empty() ? "-" : request.user, response.status);
  };
  const std::string any = R"(/(slurm|slurmdb|ui/api)/.*)";
  server.Get(any, serve);
  server.Post(any, serve);
  server.Delete(any, serve);
  server.Put(any, serve);
  server.Patch(any, serve);
  // The dashboard's page: its files as built in. It holds no data; its calls carry the token.
  auto page = [](const httplib::Request& in, httplib::Response& out) {
    std::string name = in.path == "/ui" || in.path == "/ui/" ? "index.html" : in.path.substr(4);
    for (const WebAsset& asset : WebAssets())
      if (asset.name == name) {
        out.set_content(std::string(asset.content), std::string(asset.content_type));
        out.set_header("Cache-Control", "no-cache");
        out.set_header("X-Content-Type-Options", "nosniff");
        out.set_header("Content-Security-Policy",
                       "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'");
        out.set_header("Referrer-Policy", "no-referrer");
        return;
      }
    out.status = 404;
    out.set_content("no such page: " + in.path + " (the dashboard is at /ui/)\n", "text/plain");
  };
  server.Get(R"(/ui(/[A-Za-z0-9_.-]*)?)", page);
}

}  // namespace drover::cli::restd
