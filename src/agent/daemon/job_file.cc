// sbcast on this node: a file written, piece by piece, as the user of a job that runs here. See
// Agent::WriteJobFile.
#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "agent/daemon/agent.h"
#include "agent/host/spawn.h"
#include "agent/stepd/spool.h"

namespace drover::agent {

// The most one piece carries (sbcast sends at most this much per call).
inline constexpr size_t kMostFilePiece = size_t{64} << 20;

Status Agent::WriteJobFile(const v1::JobFileChunk& chunk,
                           const std::function<bool(uint32_t)>& may_act) {
  const uint64_t job = chunk.job_id();
  std::vector<uint64_t> running = RunningJobs();
  if (!std::binary_search(running.begin(), running.end(), job))
    return MakeError(fmt::format("job {} is not running on {}", job, node_name_));
  auto launched = ReadLaunch(JobDir(job));
  if (!launched) return MakeError(fmt::format("job {}: {}", job, launched.error()));
  if (!may_act(launched->uid))
    return MakeError(fmt::format("Access/permission denied: job {} is not yours", job));
  const std::string& path = chunk.path();
  if (!path.starts_with('/') || path.find('\0') != std::string::npos || path.size() > 4096)
    return MakeError(fmt::format("{}: the destination must be an absolute path", path));
  if (chunk.data().size() > kMostFilePiece)
    return MakeError(fmt::format("a piece of more than {} bytes", kMostFilePiece));
  std::optional<ProcessUser> user;
  if (::getuid() == 0) {
    std::vector<char> buffer(16384);
    passwd entry{};
    passwd* found = nullptr;
    std::string name = std::to_string(launched->uid);
    std::vector<gid_t> groups{launched->gid};
    if (getpwuid_r(launched->uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found) {
      name = found->pw_name;
      groups = GroupsOf(found->pw_name, launched->gid);
    }
    user = ProcessUser{name, launched->uid, launched->gid, groups};
  } else if (launched->uid != ::geteuid()) {
    return MakeError(fmt::format("droverd on {} runs as uid {} and cannot write uid {}'s files",
                                 node_name_, ::geteuid(), launched->uid));
  }
  if (chunk.directory()) {
    if (int error = MakeDirectoryAsUser(user, path); error != 0)
      return MakeError(fmt::format("{}: {}", path, std::strerror(error)));
    return OkStatus();
  }
  FilePiece piece;
  piece.offset = chunk.offset();
  piece.data = chunk.data();
  piece.last = chunk.last();
  piece.replace = chunk.replace();
  piece.mode = static_cast<mode_t>(chunk.mode() & 07777);
  if (chunk.preserve()) piece.times = std::pair{chunk.atime(), chunk.mtime()};
  if (int error = WritePieceAsUser(user, path, piece); error != 0)
    return MakeError(fmt::format("{}: {}", path, std::strerror(error)));
  return OkStatus();
}

}  // namespace drover::agent
