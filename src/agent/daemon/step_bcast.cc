// srun --bcast on this node: the step's program (and --send-libs' libraries) written where srun
// asked, as the job's user, before any task starts; the tasks then run that copy (srun(1)).
#include <fmt/format.h>

#include <cstring>

#include "agent/daemon/step_session.h"

namespace drover::agent {

Status StepSession::WriteBcastFiles() {
  std::string libraries;  // <program>_libs, once a library is written
  for (const v1::StepLaunch::BcastFile& file : launch_.bcast()) {
    std::string path = file.path();
    if (!file.library() && path.ends_with('/'))
      path += fmt::format("slurm_bcast_{}.{}_{}", job_id_, launch_.step_id(), agent_.node_name_);
    if (file.library()) {
      if (bcast_program_.empty() || file.path().find('/') != std::string::npos)
        return MakeError(fmt::format("--bcast: library {} without its program", file.path()));
      if (libraries.empty()) {
        libraries = bcast_program_ + "_libs";
        if (int error = MakeDirectoryAsUser(user_, libraries); error != 0)
          return MakeError(fmt::format("--bcast: cannot make {} on {}: {}", libraries,
                                       agent_.node_name_, std::strerror(error)));
      }
      path = libraries + "/" + file.path();
    }
    if (!path.starts_with('/'))
      return MakeError(fmt::format("--bcast: {} is not an absolute path", path));
    if (int error = WriteFileAsUser(user_, path, file.data(), file.mode() & 07777); error != 0)
      return MakeError(fmt::format("--bcast: cannot write {} on {}: {}", path, agent_.node_name_,
                                   std::strerror(error)));
    if (!file.library()) bcast_program_ = path;
  }
  if (!libraries.empty()) {
    // As Slurm's srun --send-libs: the copies' directory first on the loader's path.
    auto current = FindVariable(environment_, "LD_LIBRARY_PATH");
    SetVariable(environment_, "LD_LIBRARY_PATH",
                current && !current->empty() ? libraries + ":" + *current : libraries);
  }
  return OkStatus();
}

}  // namespace drover::agent
