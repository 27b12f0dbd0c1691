// Accounting as sacctmgr manages it: clusters, accounts, users, associations (which user may
// charge which account, with shares and limits, in a tree under "root") and QOS. Value types and
// lookups; the changes sacctmgr asks for are in accounting_change.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/tres.h"

namespace drover::acct {

inline constexpr int64_t kUnset = -1;  // a limit not set: no limit (Slurm prints it blank)

enum class AdminLevel { kNone, kOperator, kAdministrator };
std::string_view AdminLevelName(AdminLevel level);  // "None", "Operator", "Administrator"
// Any case, and Slurm's abbreviations ("admin", "oper").
Result<AdminLevel> ParseAdminLevel(std::string_view text);

// The limits associations and QOS share, in Slurm's names. Counts are kUnset when not set; TRES
// lists are empty when not set. Minutes for *Mins and *Wall.
struct Limits {
  int64_t grp_jobs = kUnset;
  int64_t grp_submit_jobs = kUnset;
  int64_t grp_wall_minutes = kUnset;
  TresList grp_tres, grp_tres_mins, grp_tres_run_mins;
  int64_t max_jobs = kUnset;          // association: its jobs at once (per user for a user's)
  int64_t max_submit_jobs = kUnset;   // association: its jobs pending or running
  int64_t max_wall_minutes = kUnset;  // per job
  TresList max_tres, max_tres_per_node, max_tres_mins;  // per job
};

struct Cluster {
  std::string name;
};

struct Account {
  std::string name, description, organization;
};

struct User {
  std::string name;
  std::string default_account;
  AdminLevel admin_level = AdminLevel::kNone;
};

// QOS flags as Slurm names them (sacctmgr's Flags=).
enum QosFlag : uint32_t {
  kDenyOnLimit = 1u << 0,
  kEnforceUsageThreshold = 1u << 1,
  kNoDecay = 1u << 2,
  kNoReserve = 1u << 3,
  kOverPartQos = 1u << 4,
  kPartitionMaxNodes = 1u << 5,
  kPartitionMinNodes = 1u << 6,
  kPartitionTimeLimit = 1u << 7,
  kRequiresReservation = 1u << 8,
  kUsageFactorSafe = 1u << 9,
};
// "DenyOnLimit,NoDecay" in Slurm's order; empty for none.
std::string FormatQosFlags(uint32_t flags);
// A comma list of flag names, any case; an error names the unknown one and the known ones.
Result<uint32_t> ParseQosFlags(std::string_view text);

struct Qos {
  uint32_t id = 0;
  std::string name, description;
  uint32_t priority = 0;
  Limits limits;  // Grp* over every job of the QOS; Max* per job (MaxJobs/MaxSubmit per user)
  TresList max_tres_per_user, max_tres_per_account, min_tres;
  int64_t max_jobs_per_account = kUnset;
  int64_t max_submit_per_account = kUnset;
  std::vector<std::string> preempt;      // QOS whose jobs this one's may preempt (preempt/qos)
  std::string preempt_mode = "cluster";  // cluster, off, cancel, requeue or suspend
  int64_t grace_seconds = 0;
  int64_t preempt_exempt_seconds = kUnset;
  uint32_t flags = 0;
  double usage_factor = 1.0;
  double usage_threshold = -1;  // a fraction of the fair share; -1: none
};

// An account's association (user empty), or a user's under an account. The account's parent is
// the account named by `parent`; root's parent is empty. Limits not set on an association are
// its parent's (Effective()): Max*, QOS and DefaultQOS; Grp* apply over the subtree.
struct Association {
  uint32_t id = 0;
  std::string cluster, account, user, partition;
  std::string parent;   // parent account of an account association; the account for a user's
  uint32_t shares = 1;  // Fairshare=
  int64_t priority = kUnset;
  Limits limits;
  std::vector<std::string> qos;  // empty: the parent's
  std::string default_qos;       // empty: the parent's

  bool is_user() const { return !user.empty(); }
};

// Everything accounting holds for the clusters it serves.
struct Database {
  std::vector<Cluster> clusters;
  std::vector<Account> accounts;
  std::vector<User> users;
  std::vector<Association> associations;  // parents before their children
  std::vector<Qos> qos;
  uint32_t next_association_id = 1;
  uint32_t next_qos_id = 1;

  // A new database as Slurm's starts: the cluster, account root with its association, user
  // root (Administrator) under it, and QOS normal, root's default.
  static Database Initial(std::string_view cluster);
  // Adds `cluster` with its root association (QOS normal, when there is one) and user root's
  // under it, as Slurm does for a new cluster; the root association's index.
  size_t AddCluster(std::string_view cluster);

  const Account* FindAccount(std::string_view name) const;
  const User* FindUser(std::string_view name) const;
  const Qos* FindQos(std::string_view name) const;
  const Cluster* FindCluster(std::string_view name) const;
  // The association of `account` (user empty) or of `user` under `account` on `cluster`, with
  // no partition; null when there is none.
  const Association* FindAssociation(std::string_view cluster, std::string_view account,
                                     std::string_view user = {}) const;
  // `cluster`'s associations depth-first from root, each with its depth (root 0): under one
  // parent its users first, then its sub-accounts, each group by name (Slurm's order for show
  // assoc and sshare). Parents always come before their children.
  std::vector<std::pair<const Association*, int>> Hierarchy(std::string_view cluster) const;
  // The association's parent (null for root).
  const Association* Parent(const Association& association) const;
  // The association with its unset Max* limits, QOS list and default QOS taken from the nearest
  // ancestor that sets them (what Slurm applies and sacctmgr shows).
  Association Effective(const Association& association) const;
  AdminLevel AdminLevelOf(std::string_view user) const;
};

}  // namespace drover::acct
