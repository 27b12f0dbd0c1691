// See agent_address.h.
#include "common/agent_address.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

namespace drover {
namespace fs = std::filesystem;

namespace {
constexpr const char* kAddressFile = "droverd.address";
}  // namespace

fs::path AgentSpoolDir(const ClusterSettings& settings, const std::string& node) {
  std::string path = settings.slurmd_spool_dir;
  for (size_t at = path.find("%n"); at != std::string::npos; at = path.find("%n", at + node.size()))
    path.replace(at, 2, node);
  return path;
}

Status WriteAgentAddress(const fs::path& spool, const std::string& address) {
  fs::path file = spool / kAddressFile;
  fs::path temporary = spool / fmt::format(".{}.{}", kAddressFile, getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << address << "\n";
    out.close();
    if (!out) return MakeError(fmt::format("cannot write {}", temporary.string()));
  }
  ::chmod(temporary.c_str(), 0644);
  std::error_code error;
  fs::rename(temporary, file, error);
  if (error) {
    fs::remove(temporary, error);
    return MakeError(fmt::format("cannot write {}: {}", file.string(), error.message()));
  }
  return OkStatus();
}

Result<std::string> ReadAgentAddress(const fs::path& spool) {
  fs::path file = spool / kAddressFile;
  std::ifstream in(file);
  std::string address;
  if (!(in >> address) || address.empty())
    return MakeError(
        fmt::format("cannot read {}: is droverd running on this node?", file.string()));
  return address;
}

}  // namespace drover
