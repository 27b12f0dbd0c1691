// srun --mpi=pmix: the agent hosts OpenPMIx's server (Debian libpmix2; the library's own wire
// protocol, not ours). OpenPMIx allows one server per process, so the agent has one, started by
// the first step that asks, and each step is a namespace of it: registered with the step's
// process map before its tasks start, its tasks registered as clients (their uid and gid are
// checked when they connect), and removed when the step ends here. A fence of the namespace's
// tasks here becomes this node's part of a collective, which the step session exchanges with the
// other nodes through srun; every node's parts come back to the library joined.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/result.h"

namespace drover::agent {

// Whether this build has OpenPMIx (pkg-config pmix when it was configured).
bool PmixAvailable();

struct PmixNamespace {
  std::string name;                     // "drover.<job id>.<step id>"
  std::string job_id;                   // PMIX_JOBID: "<job id>.<step id>"
  std::vector<std::string> node_names;  // the step's nodes, by node index
  std::vector<uint32_t> node_of_rank;   // by global rank
  uint32_t node_index = 0;              // this node's
  uid_t uid = 0;
  gid_t gid = 0;
  // A fence: this node's part out; `done` gets every node's parts (or an empty vector and false
  // when the exchange failed). Called on the library's thread; must not block.
  std::function<void(std::string part,
                     std::function<void(bool ok, std::vector<std::string> parts)> done)>
      fence;
  // A task called PMIx_Abort.
  std::function<void(int status, std::string message)> abort;
};

// Registers the namespace with the agent's server (started on first use, with its rendezvous
// socket in `server_dir`), and its tasks here as clients. Errors say what failed.
Status PmixRegister(const PmixNamespace& space, const std::string& server_dir);
// The variables that point task `rank` at the server (PMIX_NAMESPACE, PMIX_RANK,
// PMIX_SERVER_URI*, ...), as NAME=value.
Result<std::vector<std::string>> PmixClientEnvironment(const std::string& space, uint32_t rank);
// Forgets the namespace and its clients.
void PmixDeregister(const std::string& space);

}  // namespace drover::agent
