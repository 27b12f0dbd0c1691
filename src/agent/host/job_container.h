// A job's private /tmp and /dev/shm (JobContainerType=job_container/tmpfs, as Slurm's plugin):
// a mount namespace per job on each node in which every configured directory is the job's own
// — a directory under BasePath bound over /tmp, a fresh tmpfs over /dev/shm — held open by a
// bind mount of the namespace at <job dir>/.ns, so the batch shell and every step's tasks enter
// the same one. Removed, with everything the job left there, when the job ends. Needs root.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace drover::agent {

struct JobContainer {
  std::string base;               // BasePath
  std::string job_dir;            // <base>/<job id> (emulated nodes: <base>/<node>/<job id>)
  std::vector<std::string> dirs;  // /tmp, /dev/shm, ...
  bool auto_base = false;         // AutoBasePath: create `base` when missing
  std::string NamespaceFile() const { return job_dir + "/.ns"; }
};

// Makes the job's directory and namespace. Errors: "BasePath /x does not exist (create it, or
// set AutoBasePath=true in job_container.conf)", "unshare: Operation not permitted", ...
Status CreateJobContainer(const JobContainer& container);

// Whether `base` is a folder the agent may make jobs' folders in as root (`what` names it in
// errors, "BasePath"): a directory (or root's symbolic link to one) owned by root and writable
// by no one else, so that no user can swap a job's folder for a link.
Status CheckRootFolder(const std::string& base, std::string_view what);

// The job's namespace is in place (its file is a bound namespace, not the empty file it starts
// as).
bool IsJobNamespace(const JobContainer& container);

// Opens the job's namespace for setns(2) (O_CLOEXEC); -1 with the error when it cannot.
Result<int> OpenJobNamespace(const JobContainer& container);

// Lets go of the namespace and removes the job's directory with what is in it.
Status RemoveJobContainer(const JobContainer& container);

// Where a directory's private copy lives: "/tmp" -> "<job dir>/tmp", "/var/tmp" ->
// "<job dir>/var_tmp".
std::string PrivateCopyOf(const JobContainer& container, const std::string& dir);

}  // namespace drover::agent
