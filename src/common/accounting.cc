// Accounting's value types: names of admin levels and QOS flags, the initial database, lookups
// and the inheritance of limits down the association tree.
#include "common/accounting.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <utility>

#include "common/text.h"

namespace drover::acct {
namespace {

struct FlagName {
  QosFlag flag;
  std::string_view name;
};
// Slurm's order of printing (slurmdb_qos_flags_str).
constexpr FlagName kQosFlags[] = {
    {kDenyOnLimit, "DenyOnLimit"},
    {kEnforceUsageThreshold, "EnforceUsageThreshold"},
    {kNoReserve, "NoReserve"},
    {kPartitionMaxNodes, "PartitionMaxNodes"},
    {kPartitionMinNodes, "PartitionMinNodes"},
    {kOverPartQos, "OverPartQOS"},
    {kPartitionTimeLimit, "PartitionTimeLimit"},
    {kRequiresReservation, "RequiresReservation"},
    {kNoDecay, "NoDecay"},
    {kUsageFactorSafe, "UsageFactorSafe"},
};

template <typename T>
const T* FindNamed(const std::vector<T>& items, std::string_view name) {
  auto it =
      std::find_if(items.begin(), items.end(), [name](const T& item) { return item.name == name; });
  return it == items.end() ? nullptr : &*it;
}

void Inherit(int64_t& value, int64_t parent) {
  if (value == kUnset) value = parent;
}

void Inherit(TresList& value, const TresList& parent) {
  if (value.empty()) value = parent;
}

}  // namespace

std::string_view AdminLevelName(AdminLevel level) {
  switch (level) {
    case AdminLevel::kOperator:
      return "Operator";
    case AdminLevel::kAdministrator:
      return "Administrator";
    case AdminLevel::kNone:
      break;
  }
  return "None";
}

Result<AdminLevel> ParseAdminLevel(std::string_view text) {
  // As sacctmgr: a prefix of the word is enough ("admin", "oper", "none").
  std::string word = ToLower(Trim(text));
  if (!word.empty()) {
    if (std::string_view("none").starts_with(word)) return AdminLevel::kNone;
    if (std::string_view("operator").starts_with(word)) return AdminLevel::kOperator;
    if (std::string_view("administrator").starts_with(word)) return AdminLevel::kAdministrator;
  }
  return MakeError(
      fmt::format("Unknown AdminLevel '{}' (expected None, Operator or Administrator)", text));
}

std::string FormatQosFlags(uint32_t flags) {
  std::vector<std::string> names;
  for (const FlagName& flag : kQosFlags) {
    if (flags & flag.flag) names.emplace_back(flag.name);
  }
  return Join(names, ",");
}

Result<uint32_t> ParseQosFlags(std::string_view text) {
  uint32_t flags = 0;
  for (const std::string& word : Split(text, ',')) {
    if (Trim(word).empty()) continue;
    auto it = std::find_if(std::begin(kQosFlags), std::end(kQosFlags), [&](const FlagName& flag) {
      return EqualsIgnoreCase(flag.name, Trim(word));
    });
    if (it == std::end(kQosFlags)) {
      std::vector<std::string> known;
      for (const FlagName& flag : kQosFlags) known.emplace_back(flag.name);
      return MakeError(
          fmt::format("Unknown QOS flag '{}' (flags: {})", Trim(word), Join(known, ", ")));
    }
    flags |= it->flag;
  }
  return flags;
}

Database Database::Initial(std::string_view cluster) {
  Database database;
  database.accounts.push_back({"root", "default root account", "root"});
  database.users.push_back({"root", "root", AdminLevel::kAdministrator});
  Qos normal;
  normal.id = database.next_qos_id++;
  normal.name = "normal";
  normal.description = "Normal QOS default";
  database.qos.push_back(std::move(normal));
  database.AddCluster(cluster);
  return database;
}

size_t Database::AddCluster(std::string_view cluster) {
  clusters.push_back({std::string(cluster)});
  Association root;
  root.id = next_association_id++;
  root.cluster = std::string(cluster);
  root.account = "root";
  if (FindQos("normal")) {
    root.qos = {"normal"};
    root.default_qos = "normal";
  }
  associations.push_back(root);
  size_t index = associations.size() - 1;
  Association root_user;
  root_user.id = next_association_id++;
  root_user.cluster = std::string(cluster);
  root_user.account = "root";
  root_user.user = "root";
  root_user.parent = "root";
  associations.push_back(std::move(root_user));
  return index;
}

const Account* Database::FindAccount(std::string_view name) const {
  return FindNamed(accounts, name);
}

const User* Database::FindUser(std::string_view name) const {
  return FindNamed(users, name);
}

const Qos* Database::FindQos(std::string_view name) const {
  return FindNamed(qos, name);
}

const Cluster* Database::FindCluster(std::string_view name) const {
  return FindNamed(clusters, name);
}

const Association* Database::FindAssociation(std::string_view cluster, std::string_view account,
                                             std::string_view user) const {
  for (const Association& association : associations) {
    if (association.cluster == cluster && association.account == account &&
        association.user == user && association.partition.empty())
      return &association;
  }
  return nullptr;
}

std::vector<std::pair<const Association*, int>> Database::Hierarchy(
    std::string_view cluster) const {
  std::vector<std::pair<const Association*, int>> order;
  const Association* root = FindAssociation(cluster, "root");
  if (!root) return order;
  // Children by parent account, users and sub-accounts apart, each sorted by name.
  std::map<std::string_view,
           std::pair<std::vector<const Association*>, std::vector<const Association*>>>
      children;
  for (const Association& association : associations) {
    if (association.cluster != cluster || !association.partition.empty()) continue;
    if (association.is_user())
      children[association.account].first.push_back(&association);
    else if (&association != root)
      children[association.parent].second.push_back(&association);
  }
  for (auto& [parent, family] : children) {
    std::sort(family.first.begin(), family.first.end(),
              [](const auto* a, const auto* b) { return a->user < b->user; });
    std::sort(family.second.begin(), family.second.end(),
              [](const auto* a, const auto* b) { return a->account < b->account; });
  }
  // An explicit stack: the tree's depth is the user's to choose.
  std::vector<std::pair<const Association*, int>> stack{{root, 0}};
  while (!stack.empty()) {
    auto [account, depth] = stack.back();
    stack.pop_back();
    order.emplace_back(account, depth);
    auto family = children.find(account->account);
    if (family == children.end()) continue;
    for (const Association* user : family->second.first) order.emplace_back(user, depth + 1);
    for (auto it = family->second.second.rbegin(); it != family->second.second.rend(); ++it)
      stack.emplace_back(*it, depth + 1);
  }
  return order;
}

const Association* Database::Parent(const Association& association) const {
  if (association.is_user()) return FindAssociation(association.cluster, association.account);
  if (association.parent.empty()) return nullptr;
  return FindAssociation(association.cluster, association.parent);
}

Association Database::Effective(const Association& association) const {
  Association effective = association;
  // Bounded by the tree's depth; a cycle (never written) cannot loop past the count.
  const Association* parent = Parent(association);
  for (size_t depth = 0; parent && depth < associations.size(); ++depth) {
    Limits& limits = effective.limits;
    Inherit(limits.max_jobs, parent->limits.max_jobs);
    Inherit(limits.max_submit_jobs, parent->limits.max_submit_jobs);
    Inherit(limits.max_wall_minutes, parent->limits.max_wall_minutes);
    Inherit(limits.max_tres, parent->limits.max_tres);
    Inherit(limits.max_tres_per_node, parent->limits.max_tres_per_node);
    Inherit(limits.max_tres_mins, parent->limits.max_tres_mins);
    Inherit(effective.priority, parent->priority);
    if (effective.qos.empty()) effective.qos = parent->qos;
    if (effective.default_qos.empty()) effective.default_qos = parent->default_qos;
    parent = Parent(*parent);
  }
  return effective;
}

AdminLevel Database::AdminLevelOf(std::string_view user) const {
  const User* found = FindUser(user);
  return found ? found->admin_level : AdminLevel::kNone;
}

}  // namespace drover::acct
