// srun --mpi=pmi2: the PMI-1 and PMI-2 wire protocols as Slurm's mpi/pmi2 plugin serves them to
// the tasks of a step on one node, each on its own socket (PMI_FD). This is the protocol alone,
// with no descriptors or threads: a task's bytes go in, its replies come out, and a fence is
// handed to the caller as this node's part (the keys put here since the last fence), to be
// exchanged with the step's other nodes; the parts of every node come back through FenceDone,
// which releases the waiting tasks.
//
// PMI-1 is lines of "cmd=NAME key=value ...\n". A client that asks for pmi_version=2 in its init
// speaks PMI-2 from then on: a six-character decimal length, then "cmd=NAME;key=value;...;" with
// a ';' inside a value doubled.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace drover::agent {

// What every task of the step is told.
struct PmiStep {
  uint32_t size = 0;            // the step's tasks
  std::string kvsname;          // the step's key-value space: "<job id>.<step id>"
  std::string process_mapping;  // PMI_process_mapping: "(vector,(0,2,2))"
  uint32_t universe_size = 0;
  uint32_t appnum = 0;
};

// PMI_process_mapping from each rank's node index: runs of consecutive ranks on one node, with
// runs of the same length on consecutive nodes joined, as MPICH reads it.
std::string PmiProcessMapping(const std::vector<uint32_t>& node_of_rank);

// This node's part of a fence and the parts back: key and value pairs, each length-prefixed.
std::string EncodePmiPairs(const std::vector<std::pair<std::string, std::string>>& pairs);
// False when `part` is malformed.
bool DecodePmiPairs(std::string_view part, std::vector<std::pair<std::string, std::string>>& out);

class PmiWireServer {
 public:
  // The PMI-1 limits a client is told (get_maxes), enforced on every put.
  static constexpr size_t kKvsNameMost = 256, kKeyMost = 256, kValueMost = 1024;
  // A client's unread bytes beyond this break its connection (no command is this long).
  static constexpr size_t kBufferMost = 64 * 1024;
  // This node's puts between two fences, at most; and the step's keys and values, all told.
  static constexpr size_t kPartMost = 16 * 1024 * 1024;
  static constexpr size_t kSpaceMost = 64 * 1024 * 1024;

  // `ranks`: the global rank of each task here, by local index.
  PmiWireServer(PmiStep step, std::vector<uint32_t> ranks);

  // Bytes from the task at local index `local`.
  void Receive(size_t local, std::string_view bytes);
  // What is to be written to the task, taken.
  std::string TakeReplies(size_t local);
  // The task's socket closed (it ended): its fences no longer wait for it.
  void Closed(size_t local);
  // The task broke the protocol, or sent replies it does not read: its connection is to be
  // closed.
  bool Broken(size_t local) const { return clients_[local].broken; }
  // Why, for the log.
  const std::string& BrokenWhy(size_t local) const { return clients_[local].why; }

  // Once every task here has entered the fence: this node's part. Returned once per fence.
  std::optional<std::string> TakeFencePart();
  // Every node's part of the fence: their keys join the space and the waiting tasks are released.
  // False (the tasks are released with an error) when a part is malformed.
  bool FenceDone(const std::vector<std::string>& parts);

  // A task called abort: its exit code and message; none until one does.
  std::optional<std::pair<int, std::string>> abort() const { return abort_; }

 private:
  struct Client {
    uint32_t rank = 0;
    int version = 0;  // 0 before init, then 1 or 2
    std::string in, out;
    bool in_fence = false, finalized = false, broken = false;
    std::string why;
  };
  using Fields = std::vector<std::pair<std::string, std::string>>;

  void Parse(Client& client);
  void HandleV1(Client& client, const Fields& fields);
  void HandleV2(Client& client, const Fields& fields);
  void ReplyV1(Client& client, std::string_view text);
  void ReplyV2(Client& client, const Fields& fields);
  bool Put(const std::string& key, const std::string& value, std::string& error);
  std::optional<std::string> JobAttribute(const std::string& key) const;
  void Break(Client& client, std::string why);

  PmiStep step_;
  std::vector<Client> clients_;
  std::unordered_map<std::string, std::string> kvs_;       // every node's, as of the last fence
  std::vector<std::pair<std::string, std::string>> puts_;  // this node's since the last fence
  size_t put_bytes_ = 0;
  size_t kvs_bytes_ = 0;                                // what kvs_ holds, counted as it was added
  std::map<std::string, std::string> node_attributes_;  // info-putnodeattr: this node's own
  std::vector<std::pair<size_t, std::string>> node_waiters_;  // info-getnodeattr wait=TRUE
  bool part_taken_ = false;
  bool fence_failed_ = false;
  std::optional<std::pair<int, std::string>> abort_;
};

}  // namespace drover::agent
