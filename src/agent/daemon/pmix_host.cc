// The agent's OpenPMIx server. See pmix_host.h.
#include "agent/daemon/pmix_host.h"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "common/log.h"

#ifdef DROVER_HAVE_PMIX
#include <pmix.h>
#include <pmix_server.h>
#endif

namespace drover::agent {

#ifndef DROVER_HAVE_PMIX

bool PmixAvailable() {
  return false;
}
Status PmixRegister(const PmixNamespace&, const std::string&) {
  return MakeError("--mpi=pmix: this droverd was built without OpenPMIx (Debian libpmix-dev)");
}
Result<std::vector<std::string>> PmixClientEnvironment(const std::string&, uint32_t) {
  return MakeError("--mpi=pmix: this droverd was built without OpenPMIx");
}
void PmixDeregister(const std::string&) {}

#else

namespace {

using FenceFn = decltype(PmixNamespace::fence);

struct Host {
  std::mutex mutex;
  bool started = false;
  std::string dir;
  std::map<std::string, PmixNamespace> spaces;
};

Host& TheHost() {
  static Host* host = new Host;  // outlives every thread that may call into it
  return *host;
}

// A blocking wait on one of the library's non-blocking operations.
struct Wait {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  pmix_status_t status = PMIX_SUCCESS;
};

// The callback's own reference (cbdata): a wait given up on (timed out) stays alive until the
// library calls back, however late.
void* Hold(const std::shared_ptr<Wait>& wait) {
  return new std::shared_ptr<Wait>(wait);
}

void OpDone(pmix_status_t status, void* cbdata) {
  auto* held = static_cast<std::shared_ptr<Wait>*>(cbdata);
  {
    Wait& wait = **held;
    std::lock_guard<std::mutex> lock(wait.mutex);
    wait.status = status;
    wait.done = true;
    wait.done_cv.notify_all();
  }
  delete held;
}

// `started` is what the call returned; `cbdata` the reference it was given, released here when
// the library will not call back.
pmix_status_t Finish(pmix_status_t started, const std::shared_ptr<Wait>& wait, void* cbdata) {
  if (started != PMIX_SUCCESS) {
    delete static_cast<std::shared_ptr<Wait>*>(cbdata);
    return started == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : started;
  }
  std::unique_lock<std::mutex> lock(wait->mutex);
  if (!wait->done_cv.wait_for(lock, std::chrono::seconds(30), [&] { return wait->done; }))
    return PMIX_ERR_TIMEOUT;
  return wait->status;
}

std::optional<PmixNamespace> Find(const char* name) {
  Host& host = TheHost();
  std::lock_guard<std::mutex> lock(host.mutex);
  auto found = host.spaces.find(name);
  if (found == host.spaces.end()) return std::nullopt;
  return found->second;
}

// The library's fence of one namespace's tasks here: only the whole namespace (every rank) is
// a fence Drover can run, as the step's nodes all take part.
pmix_status_t FenceNb(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t[], size_t,
                      char* data, size_t ndata, pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  if (nprocs != 1 || procs[0].rank != PMIX_RANK_WILDCARD) return PMIX_ERR_NOT_SUPPORTED;
  std::optional<PmixNamespace> space = Find(procs[0].nspace);
  if (!space || !space->fence) return PMIX_ERR_NOT_FOUND;
  space->fence(std::string(data, ndata), [cbfunc, cbdata](bool ok, std::vector<std::string> parts) {
    auto* joined = new std::string;
    for (const std::string& part : parts) *joined += part;
    cbfunc(
        ok ? PMIX_SUCCESS : PMIX_ERROR, joined->data(), joined->size(), cbdata,
        [](void* release) { delete static_cast<std::string*>(release); }, joined);
  });
  return PMIX_SUCCESS;
}

pmix_status_t Abort(const pmix_proc_t* proc, void*, int status, const char* message, pmix_proc_t[],
                    size_t, pmix_op_cbfunc_t, void*) {
  log::Warning("PMIx: {} rank {} aborted the step (status {}): {}", proc->nspace, proc->rank,
               status, message ? message : "");
  std::optional<PmixNamespace> space = Find(proc->nspace);
  if (space && space->abort) space->abort(status, message ? message : "");
  return PMIX_OPERATION_SUCCEEDED;
}

Status Start(const std::string& dir) {
  static pmix_server_module_t module{};
  module.fence_nb = FenceNb;
  module.abort = Abort;
  pmix_info_t* info = nullptr;
  constexpr size_t kInfo = 4;
  PMIX_INFO_CREATE(info, kInfo);
  PMIx_Info_load(&info[0], PMIX_SERVER_TMPDIR, dir.c_str(), PMIX_STRING);
  PMIx_Info_load(&info[1], PMIX_SYSTEM_TMPDIR, dir.c_str(), PMIX_STRING);
  // The tasks run as their users: the socket lets anyone connect, and the library admits only
  // a registered client whose uid and gid (SO_PEERCRED) match its registration.
  uint32_t mode = 0777;
  PMIx_Info_load(&info[2], PMIX_SOCKET_MODE, &mode, PMIX_UINT32);
  bool no = false;
  PMIx_Info_load(&info[3], PMIX_SERVER_TOOL_SUPPORT, &no, PMIX_BOOL);
  pmix_status_t status = PMIx_server_init(&module, info, kInfo);
  PMIX_INFO_FREE(info, kInfo);
  if (status != PMIX_SUCCESS)
    return MakeError(
        fmt::format("OpenPMIx's server would not start in {}: {}", dir, PMIx_Error_string(status)));
  log::Info("PMIx server {} started in {}", PMIx_Get_version(), dir);
  return OkStatus();
}

// "0,1;2,3": each node's ranks, as PMIx_generate_ppn reads them.
std::string RanksByNode(const PmixNamespace& space) {
  std::vector<std::string> nodes(space.node_names.size());
  for (uint32_t rank = 0; rank < space.node_of_rank.size(); ++rank) {
    std::string& list = nodes.at(space.node_of_rank[rank]);
    list += (list.empty() ? "" : ",") + std::to_string(rank);
  }
  std::string joined;
  for (size_t i = 0; i < nodes.size(); ++i) joined += (i ? ";" : "") + nodes[i];
  return joined;
}

}  // namespace

bool PmixAvailable() {
  return true;
}

Status PmixRegister(const PmixNamespace& space, const std::string& server_dir) {
  Host& host = TheHost();
  {
    std::lock_guard<std::mutex> lock(host.mutex);
    if (!host.started) {
      if (Status started = Start(server_dir); !started) return started;
      host.started = true;
      host.dir = server_dir;
    }
    if (space.name.size() >= PMIX_MAX_NSLEN)
      return MakeError(fmt::format("PMIx namespace {} is too long", space.name));
    if (!host.spaces.emplace(space.name, space).second)
      return MakeError(fmt::format(
          "PMIx namespace {} is registered already: two nodes of the step are served by this "
          "one agent process (emulated nodes), and PMIx needs an agent process per node",
          space.name));
  }
  std::vector<uint32_t> local;
  for (uint32_t rank = 0; rank < space.node_of_rank.size(); ++rank)
    if (space.node_of_rank[rank] == space.node_index) local.push_back(rank);
  auto fail = [&](std::string what, pmix_status_t status) {
    PmixDeregister(space.name);
    return MakeError(
        fmt::format("PMIx: {} for {}: {}", what, space.name, PMIx_Error_string(status)));
  };
  std::string node_list;
  for (const std::string& node : space.node_names)
    node_list += (node_list.empty() ? "" : ",") + node;
  char* node_map = nullptr;
  char* proc_map = nullptr;
  if (pmix_status_t status = PMIx_generate_regex(node_list.c_str(), &node_map);
      status != PMIX_SUCCESS)
    return fail("the node map", status);
  if (pmix_status_t status = PMIx_generate_ppn(RanksByNode(space).c_str(), &proc_map);
      status != PMIX_SUCCESS) {
    std::free(node_map);
    return fail("the process map", status);
  }
  std::string peers;
  for (uint32_t rank : local) peers += (peers.empty() ? "" : ",") + std::to_string(rank);
  uint32_t size = static_cast<uint32_t>(space.node_of_rank.size());
  uint32_t local_size = static_cast<uint32_t>(local.size());
  uint32_t nodes = static_cast<uint32_t>(space.node_names.size());
  uint32_t appnum = 0;
  pmix_rank_t leader = local.empty() ? 0 : local.front();
  pmix_rank_t zero = 0;
  // The job's attributes, then one PMIX_PROC_DATA array per rank.
  const size_t count = 14 + size;
  pmix_info_t* info = nullptr;
  PMIX_INFO_CREATE(info, count);
  size_t n = 0;
  PMIx_Info_load(&info[n++], PMIX_UNIV_SIZE, &size, PMIX_UINT32);
  PMIx_Info_load(&info[n++], PMIX_JOB_SIZE, &size, PMIX_UINT32);
  PMIx_Info_load(&info[n++], PMIX_MAX_PROCS, &size, PMIX_UINT32);
  PMIx_Info_load(&info[n++], PMIX_APP_SIZE, &size, PMIX_UINT32);
  PMIx_Info_load(&info[n++], PMIX_LOCAL_SIZE, &local_size, PMIX_UINT32);
  PMIx_Info_load(&info[n++], PMIX_NUM_NODES, &nodes, PMIX_UINT32);
  PMIx_Info_load(&info[n++], PMIX_JOBID, space.job_id.c_str(), PMIX_STRING);
  PMIx_Info_load(&info[n++], PMIX_APPNUM, &appnum, PMIX_UINT32);
  PMIx_Info_load(&info[n++], PMIX_APPLDR, &zero, PMIX_PROC_RANK);
  PMIx_Info_load(&info[n++], PMIX_LOCALLDR, &leader, PMIX_PROC_RANK);
  PMIx_Info_load(&info[n++], PMIX_LOCAL_PEERS, peers.c_str(), PMIX_STRING);
  PMIx_Info_load(&info[n++], PMIX_NODE_MAP, node_map, PMIX_REGEX);
  PMIx_Info_load(&info[n++], PMIX_PROC_MAP, proc_map, PMIX_REGEX);
  // The tasks' own temporary files go where theirs would (a job_container/tmpfs job sees its
  // private /tmp there).
  PMIx_Info_load(&info[n++], PMIX_TMPDIR, "/tmp", PMIX_STRING);
  std::free(node_map);
  std::free(proc_map);
  std::vector<uint16_t> local_rank_of(space.node_names.size(), 0);
  for (uint32_t rank = 0; rank < size; ++rank) {
    uint32_t node = space.node_of_rank[rank];
    uint16_t local_rank = local_rank_of.at(node)++;
    pmix_data_array_t* array = nullptr;
    constexpr size_t kProc = 6;
    PMIX_DATA_ARRAY_CREATE(array, kProc, PMIX_INFO);
    auto* items = static_cast<pmix_info_t*>(array->array);
    pmix_rank_t this_rank = rank;
    PMIx_Info_load(&items[0], PMIX_RANK, &this_rank, PMIX_PROC_RANK);
    PMIx_Info_load(&items[1], PMIX_APPNUM, &appnum, PMIX_UINT32);
    PMIx_Info_load(&items[2], PMIX_LOCAL_RANK, &local_rank, PMIX_UINT16);
    PMIx_Info_load(&items[3], PMIX_NODE_RANK, &local_rank, PMIX_UINT16);
    PMIx_Info_load(&items[4], PMIX_NODEID, &node, PMIX_UINT32);
    PMIx_Info_load(&items[5], PMIX_HOSTNAME, space.node_names.at(node).c_str(), PMIX_STRING);
    PMIx_Info_load(&info[n++], PMIX_PROC_DATA, array, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(array);
  }
  auto registered = std::make_shared<Wait>();
  void* held = Hold(registered);
  pmix_status_t status =
      Finish(PMIx_server_register_nspace(space.name.c_str(), static_cast<int>(local_size), info, n,
                                         OpDone, held),
             registered, held);
  PMIX_INFO_FREE(info, count);
  if (status != PMIX_SUCCESS) return fail("registering the namespace", status);
  for (uint32_t rank : local) {
    pmix_proc_t proc;
    PMIX_PROC_LOAD(&proc, space.name.c_str(), rank);
    auto client = std::make_shared<Wait>();
    void* client_held = Hold(client);
    status = Finish(
        PMIx_server_register_client(&proc, space.uid, space.gid, nullptr, OpDone, client_held),
        client, client_held);
    if (status != PMIX_SUCCESS) return fail(fmt::format("registering rank {}", rank), status);
  }
  return OkStatus();
}

Result<std::vector<std::string>> PmixClientEnvironment(const std::string& space, uint32_t rank) {
  pmix_proc_t proc;
  PMIX_PROC_LOAD(&proc, space.c_str(), rank);
  char** env = nullptr;
  pmix_status_t status = PMIx_server_setup_fork(&proc, &env);
  std::vector<std::string> variables;
  for (char** entry = env; entry && *entry; ++entry) {
    variables.emplace_back(*entry);
    std::free(*entry);
  }
  std::free(env);
  if (status != PMIX_SUCCESS)
    return MakeError(fmt::format("PMIx: the environment of rank {} of {}: {}", rank, space,
                                 PMIx_Error_string(status)));
  return variables;
}

void PmixDeregister(const std::string& space) {
  Host& host = TheHost();
  {
    std::lock_guard<std::mutex> lock(host.mutex);
    if (!host.spaces.erase(space) || !host.started) return;
  }
  auto done = std::make_shared<Wait>();
  PMIx_server_deregister_nspace(space.c_str(), OpDone, Hold(done));
  std::unique_lock<std::mutex> lock(done->mutex);
  done->done_cv.wait_for(lock, std::chrono::seconds(10), [&] { return done->done; });
}

#endif

}  // namespace drover::agent
