// sacctmgr add, modify and delete over a copy of the database: the words split into names,
// conditions and settings, the change made on the copy, and the copy taken only when all of it
// succeeded. The texts follow sacctmgr 22.05 (account_functions.c, user_functions.c,
// qos_functions.c, cluster_functions.c).
#include "common/accounting_change.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <utility>

#include "common/accounting_dump.h"
#include "common/accounting_settings.h"
#include "common/text.h"

namespace drover::acct {
namespace {

// The words of a request: names (bare words and Name=), conditions (before "set", after
// "where"; everything for add and delete) and settings (after "set"; for add, every Key=Value
// that is not a condition of the entity).
struct Parsed {
  std::vector<std::string> names;
  std::map<std::string, std::vector<std::string>> where;  // lower-case key -> values
  std::vector<Word> set;
};

bool Is(std::string_view key, std::initializer_list<std::string_view> names) {
  return std::any_of(names.begin(), names.end(),
                     [key](std::string_view name) { return EqualsIgnoreCase(key, name); });
}

// The canonical condition a key names for `entity`, or "" when it is not one of its conditions.
std::string ConditionKey(Entity entity, Verb verb, std::string_view key) {
  if (Is(key, {"Name", "Names"})) return "name";
  if (Is(key, {"Cluster", "Clusters"})) return entity == Entity::kCluster ? "name" : "cluster";
  switch (entity) {
    case Entity::kAccount:
      if (Is(key, {"Account", "Accounts", "Acct"})) return "name";
      if (verb != Verb::kAdd) {
        if (Is(key, {"Parent"})) return "parent";
        if (Is(key, {"Description", "Descr"})) return "description";
        if (Is(key, {"Organization", "Org"})) return "organization";
      }
      return "";
    case Entity::kUser:
      if (Is(key, {"User", "Users"})) return "name";
      if (Is(key, {"Account", "Accounts", "Acct"})) return "account";
      if (Is(key, {"Partition", "Partitions"})) return "partition";
      if (verb != Verb::kAdd) {
        if (Is(key, {"DefaultAccount", "DefAccount"})) return "defaultaccount";
        if (Is(key, {"AdminLevel"})) return "adminlevel";
      }
      return "";
    case Entity::kQos:
      if (Is(key, {"ID", "IDs"})) return "id";
      return "";
    case Entity::kCluster:
      return "";
  }
  return "";
}

Result<Parsed> ParseWords(const ChangeRequest& request) {
  Parsed parsed;
  enum class Section {
    kWhere,
    kSet
  } section = request.verb == Verb::kAdd ? Section::kSet : Section::kWhere;
  for (const std::string& text : request.words) {
    if (EqualsIgnoreCase(text, "where")) {
      section = Section::kWhere;
      continue;
    }
    if (EqualsIgnoreCase(text, "set")) {
      if (request.verb != Verb::kModify)
        return MakeError(
            fmt::format("'set' is for modify only (sacctmgr modify ... where ... "
                        "set ...)"));
      section = Section::kSet;
      continue;
    }
    if (!IsPrintableUtf8(text))
      return MakeError(
          " Invalid characters in a word: names and values must be printable UTF-8 "
          "text");
    Word word = SplitWord(text);
    if (word.key.empty()) {
      if (word.value.empty()) continue;
      for (const std::string& name : Split(word.value, ',')) {
        if (!Trim(name).empty()) parsed.names.push_back(NameOf(name));
      }
      continue;
    }
    std::string condition = ConditionKey(request.entity, request.verb, word.key);
    bool is_condition =
        !condition.empty() && (section == Section::kWhere || request.verb == Verb::kAdd);
    if (is_condition) {
      if (word.op != "=")
        return MakeError(fmt::format("Unknown condition: {}{}{} (conditions take '=')", word.key,
                                     word.op, word.value));
      std::vector<std::string>& values = parsed.where[condition];
      for (const std::string& value : Split(word.value, ',')) {
        if (Trim(value).empty()) continue;
        values.push_back(condition == "description" || condition == "organization" ||
                                 condition == "adminlevel"
                             ? std::string(Trim(value))
                             : NameOf(value));
      }
      if (condition == "name") {
        parsed.names.insert(parsed.names.end(), values.begin(), values.end());
        values.clear();
      }
      continue;
    }
    if (section == Section::kWhere && request.verb == Verb::kModify)
      return MakeError(fmt::format("Unknown condition: {}{}{}\n Use keyword 'set' to modify value",
                                   word.key, word.op, word.value));
    if (request.verb == Verb::kDelete)
      return MakeError(fmt::format("Unknown condition: {}{}{}", word.key, word.op, word.value));
    parsed.set.push_back(std::move(word));
  }
  parsed.where.erase("name");
  return parsed;
}

bool Matches(const std::map<std::string, std::vector<std::string>>& where, const std::string& key,
             const std::string& value) {
  auto it = where.find(key);
  if (it == where.end() || it->second.empty()) return true;
  return std::find(it->second.begin(), it->second.end(), value) != it->second.end();
}

bool Named(const std::vector<std::string>& names, const std::string& name) {
  return names.empty() || std::find(names.begin(), names.end(), name) != names.end();
}

// The clusters a request applies to: those named (each must exist), else all.
Result<std::vector<std::string>> ClustersOf(const Database& database, const Parsed& parsed) {
  auto it = parsed.where.find("cluster");
  std::vector<std::string> clusters;
  if (it == parsed.where.end() || it->second.empty()) {
    for (const Cluster& cluster : database.clusters) clusters.push_back(cluster.name);
    return clusters;
  }
  for (const std::string& name : it->second) {
    if (!database.FindCluster(name))
      return MakeError(
          fmt::format(" This cluster '{}' doesn't exist.\n        Contact your "
                      "admin to add it to accounting.",
                      name));
    clusters.push_back(name);
  }
  return clusters;
}

std::string Indented(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += "  " + name + "\n";
  return text;
}

Status CheckQosNames(const Database& database, const Association& association) {
  for (const std::string& qos : association.qos) {
    if (!database.FindQos(qos))
      return MakeError(
          fmt::format(" Unknown QOS '{}' (add it with sacctmgr add qos {})", qos, qos));
  }
  if (!association.default_qos.empty()) {
    if (!database.FindQos(association.default_qos))
      return MakeError(fmt::format(" Unknown QOS '{}' (add it with sacctmgr add qos {})",
                                   association.default_qos, association.default_qos));
    Association effective = database.Effective(association);
    if (std::find(effective.qos.begin(), effective.qos.end(), association.default_qos) ==
        effective.qos.end())
      return MakeError(fmt::format(
          " The default QOS '{}' is not one of the association's QOS ({}); add it to QOS= "
          "first",
          association.default_qos, Join(effective.qos, ",")));
  }
  return OkStatus();
}

// QOS+= and QOS-= on an association that inherits its QOS start from the inherited list.
Status ApplySettings(const Database& database, Association& association,
                     const std::vector<Word>& settings) {
  for (const Word& word : settings) {
    bool edits_qos = (word.op == "+=" || word.op == "-=") &&
                     (EqualsIgnoreCase(word.key, "QOS") || EqualsIgnoreCase(word.key, "QOSLevel"));
    if (edits_qos && association.qos.empty()) association.qos = database.Effective(association).qos;
    if (Status applied = ApplyAssociationSetting(association, word); !applied) return applied;
  }
  return OkStatus();
}

// Associations go after their parents; a new user association right after its account's
// subtree keeps the order readable in show assoc.
void Insert(Database& database, Association association) {
  association.id = database.next_association_id++;
  database.associations.push_back(std::move(association));
}

// A new association with `settings` applied and its QOS checked.
Status AddAssociation(Database& database, const std::string& cluster, const std::string& account,
                      const std::string& user, const std::string& parent,
                      const std::vector<Word>& settings) {
  Association association;
  association.cluster = cluster;
  association.account = account;
  association.user = user;
  association.parent = parent;
  if (Status applied = ApplySettings(database, association, settings); !applied) return applied;
  if (Status qos = CheckQosNames(database, association); !qos) return qos;
  Insert(database, std::move(association));
  return OkStatus();
}

// --- add ---

Result<ChangeOutcome> AddClusters(Database& database, const Parsed& parsed) {
  if (parsed.names.empty()) return MakeError(" Need name of cluster to add.");
  for (const Word& word : parsed.set) {
    if (Is(word.key, {"GrpTRESMins", "GrpTRESRunMins", "GrpWall"}))
      return MakeError(
          fmt::format("{} is not a valid option for the root association of a cluster.", word.key));
    if (!IsAssociationSetting(word.key) || Is(word.key, {"Parent"}))
      return MakeError(
          fmt::format(" Unknown option: {}{}{}\n Use keyword 'where' to modify condition", word.key,
                      word.op, word.value));
  }
  std::vector<std::string> added;
  for (const std::string& name : parsed.names) {
    if (database.FindCluster(name))
      return MakeError(fmt::format(" This cluster {} already exists.  Not adding.", name));
    size_t root = database.AddCluster(name);
    Association& association = database.associations[root];
    if (Status settings = ApplySettings(database, association, parsed.set); !settings)
      return std::move(settings).take_error();
    added.push_back(name);
  }
  std::string text = " Adding Cluster(s)\n";
  for (const std::string& name : added) text += fmt::format("  Name           = {}\n", name);
  if (!parsed.set.empty())
    text += " Setting\n  Default Limits:\n" + DescribeAssociationSettings(parsed.set);
  return ChangeOutcome{text, true, {}};
}

Result<ChangeOutcome> AddAccounts(Database& database, const Parsed& parsed) {
  if (parsed.names.empty()) return MakeError(" Need name of account to add.");
  std::string description, organization, parent = "root";
  std::vector<Word> limits, described;  // described: the limits and Parent, as echoed
  for (const Word& word : parsed.set) {
    if (Is(word.key, {"Description", "Descr"})) {
      description = NameOf(word.value);
    } else if (Is(word.key, {"Organization", "Org"})) {
      organization = NameOf(word.value);
    } else if (Is(word.key, {"Parent"})) {
      parent = NameOf(word.value);
      described.push_back(word);
    } else if (IsAssociationSetting(word.key)) {
      limits.push_back(word);
      described.push_back(word);
    } else {
      return MakeError(
          fmt::format(" Unknown option: {}{}{}\n Use keyword 'where' to modify condition", word.key,
                      word.op, word.value));
    }
  }
  auto clusters = ClustersOf(database, parsed);
  if (!clusters) return std::move(clusters).take_error();
  std::vector<std::string> new_accounts;
  std::string associations;
  for (const std::string& name : parsed.names) {
    if (name == parent)
      return MakeError(fmt::format(" An account can't be its own parent ({})", name));
    if (!database.FindAccount(name)) {
      database.accounts.push_back(
          {name, description.empty() ? name : description,
           organization.empty() ? (parent == "root" ? name : parent) : organization});
      new_accounts.push_back(name);
    }
    for (const std::string& cluster : *clusters) {
      if (database.FindAssociation(cluster, name)) continue;
      if (!database.FindAssociation(cluster, parent))
        return MakeError(
            fmt::format(" Parent account '{}' doesn't exist on cluster {}\n"
                        "        Contact your admin to add this account.",
                        parent, cluster));
      if (Status added = AddAssociation(database, cluster, name, "", parent, limits); !added)
        return std::move(added).take_error();
      associations += fmt::format("  A = {:<10.10} C = {:<10.10}\n", name, cluster);
    }
  }
  if (new_accounts.empty() && associations.empty())
    return ChangeOutcome{" Nothing new added.\n", false, {}};
  std::string text;
  if (!new_accounts.empty()) {
    text += " Adding Account(s)\n" + Indented(new_accounts) + " Settings\n";
    text +=
        fmt::format("  Description     = {}\n", description.empty() ? "Account Name" : description);
    text += fmt::format("  Organization    = {}\n",
                        organization.empty() ? "Parent/Account Name" : organization);
  }
  if (!associations.empty()) {
    text += " Associations\n" + associations;
    if (!described.empty()) text += " Settings\n" + DescribeAssociationSettings(described);
  }
  return ChangeOutcome{text, true, {}};
}

Result<ChangeOutcome> AddUsers(Database& database, const Parsed& parsed) {
  if (parsed.names.empty()) return MakeError(" Need name of user to add.");
  std::string default_account;
  std::optional<AdminLevel> admin;
  std::vector<Word> limits;
  for (const Word& word : parsed.set) {
    if (Is(word.key, {"DefaultAccount", "DefAccount"})) {
      default_account = NameOf(word.value);
    } else if (Is(word.key, {"AdminLevel"})) {
      auto level = ParseAdminLevel(word.value);
      if (!level) return MakeError(" " + level.error());
      admin = *level;
    } else if (IsAssociationSetting(word.key) && !Is(word.key, {"Parent"})) {
      limits.push_back(word);
    } else {
      return MakeError(fmt::format(" Unknown option: {}{}{}", word.key, word.op, word.value));
    }
  }
  if (parsed.where.count("account") == 0 && default_account.empty())
    return MakeError(" Need name of account to add user to.");
  std::vector<std::string> accounts;
  if (auto it = parsed.where.find("account"); it != parsed.where.end()) accounts = it->second;
  if (!default_account.empty() &&
      std::find(accounts.begin(), accounts.end(), default_account) == accounts.end())
    accounts.insert(accounts.begin(), default_account);
  if (accounts.empty()) return MakeError(" Need name of account to add user to.");
  std::string partition;
  if (auto it = parsed.where.find("partition"); it != parsed.where.end() && !it->second.empty())
    partition = it->second.front();
  if (!partition.empty())
    return MakeError(
        " Partition associations are not supported by Drover yet: leave "
        "Partition= out (limit a partition with its QOS= in slurm.conf)");
  auto clusters = ClustersOf(database, parsed);
  if (!clusters) return std::move(clusters).take_error();
  for (const std::string& account : accounts) {
    if (!database.FindAccount(account))
      return MakeError(
          fmt::format(" This account '{}' doesn't exist.\n        Contact your "
                      "admin to add this account.",
                      account));
  }
  std::vector<std::string> new_users;
  std::string associations;
  for (const std::string& name : parsed.names) {
    const User* existing = database.FindUser(name);
    if (!existing) {
      database.users.push_back({name, default_account.empty() ? accounts.front() : default_account,
                                admin.value_or(AdminLevel::kNone)});
      new_users.push_back(name);
    }
    for (const std::string& cluster : *clusters) {
      for (const std::string& account : accounts) {
        if (database.FindAssociation(cluster, account, name)) continue;
        if (!database.FindAssociation(cluster, account))
          return MakeError(
              fmt::format(" This account '{}' doesn't exist on cluster {}\n"
                          "        Contact your admin to add this account.",
                          account, cluster));
        if (Status added = AddAssociation(database, cluster, account, name, account, limits);
            !added)
          return std::move(added).take_error();
        associations +=
            fmt::format("  U = {:<9.9} A = {:<10.10} C = {:<10.10}\n", name, account, cluster);
      }
    }
  }
  if (new_users.empty() && associations.empty())
    return ChangeOutcome{" Nothing new added.\n", false, {}};
  std::string text;
  if (!new_users.empty()) {
    text += " Adding User(s)\n" + Indented(new_users);
    if (!default_account.empty() || admin) text += " Settings =\n";
    if (!default_account.empty()) text += fmt::format("  Default Account = {}\n", default_account);
    if (admin) text += fmt::format("  Admin Level     = {}\n", AdminLevelName(*admin));
  }
  if (!associations.empty()) {
    text += " Associations =\n" + associations;
    // As sacctmgr 22.05: Account= alone still prints the (empty) heading.
    if (!limits.empty() || parsed.where.count("account"))
      text += " Non Default Settings\n" + DescribeAssociationSettings(limits);
  }
  return ChangeOutcome{text, true, {}};
}

Result<ChangeOutcome> AddQos(Database& database, const Parsed& parsed) {
  if (parsed.names.empty()) return MakeError(" Need name of qos to add.");
  std::vector<std::string> added;
  for (const std::string& name : parsed.names) {
    if (database.FindQos(name)) continue;
    Qos qos;
    qos.name = name;
    qos.description = name;
    for (const Word& word : parsed.set) {
      if (!IsQosSetting(word.key))
        return MakeError(
            fmt::format(" Unknown option: {}{}{}\n Use keyword 'where' to modify condition",
                        word.key, word.op, word.value));
      if (Status applied = ApplyQosSetting(qos, word); !applied)
        return MakeError(" " + applied.error());
    }
    for (const std::string& preempted : qos.preempt) {
      if (!database.FindQos(preempted) && preempted != name)
        return MakeError(fmt::format(" Unknown QOS '{}' in Preempt (add it first)", preempted));
    }
    qos.id = database.next_qos_id++;
    database.qos.push_back(std::move(qos));
    added.push_back(name);
  }
  if (added.empty()) return ChangeOutcome{" Nothing new added.\n", false, {}};
  std::string text = " Adding QOS(s)\n" + Indented(added) + " Settings\n";
  std::string description =
      added.size() == 1 ? database.FindQos(added.front())->description : std::string("QOS Name");
  text += fmt::format("  Description    = {}\n", description);
  text += DescribeQosSettings(parsed.set);
  return ChangeOutcome{text, true, {}};
}

// --- modify ---

// Associations of `entity` the conditions select: accounts' own (user empty) or users'.
std::vector<Association*> SelectAssociations(Database& database, Entity entity,
                                             const Parsed& parsed,
                                             const std::vector<std::string>& clusters) {
  std::vector<Association*> selected;
  for (Association& association : database.associations) {
    if (std::find(clusters.begin(), clusters.end(), association.cluster) == clusters.end())
      continue;
    if (entity == Entity::kAccount) {
      if (association.is_user() || !Named(parsed.names, association.account)) continue;
      if (!Matches(parsed.where, "parent", association.parent)) continue;
    } else {
      if (!association.is_user() || !Named(parsed.names, association.user)) continue;
      if (!Matches(parsed.where, "account", association.account)) continue;
      if (!Matches(parsed.where, "partition", association.partition)) continue;
    }
    selected.push_back(&association);
  }
  return selected;
}

bool AccountMatches(const Parsed& parsed, const Account& account) {
  auto matches_text = [&](const std::string& key, const std::string& value) {
    auto it = parsed.where.find(key);
    if (it == parsed.where.end() || it->second.empty()) return true;
    return std::any_of(it->second.begin(), it->second.end(),
                       [&](const std::string& wanted) { return EqualsIgnoreCase(wanted, value); });
  };
  return Named(parsed.names, account.name) && matches_text("description", account.description) &&
         matches_text("organization", account.organization);
}

bool UserMatches(const Parsed& parsed, const User& user) {
  if (!Named(parsed.names, user.name)) return false;
  if (!Matches(parsed.where, "defaultaccount", user.default_account)) return false;
  auto it = parsed.where.find("adminlevel");
  if (it != parsed.where.end() && !it->second.empty()) {
    return std::any_of(it->second.begin(), it->second.end(), [&](const std::string& level) {
      auto parsed_level = ParseAdminLevel(level);
      return parsed_level && *parsed_level == user.admin_level;
    });
  }
  return true;
}

bool WouldCycle(const Database& database, const Association& account, const std::string& parent) {
  // The new parent must not be the account itself or one of its descendants.
  const Association* walk = database.FindAssociation(account.cluster, parent);
  for (size_t depth = 0; walk && depth <= database.associations.size(); ++depth) {
    if (walk->account == account.account) return true;
    walk = database.Parent(*walk);
  }
  return false;
}

// What a modify of accounts or users changed: the records (" Modified users...") and the
// associations (" Modified user associations..."), or " Nothing modified".
ChangeOutcome Modified(std::string_view records_name, const std::vector<std::string>& records,
                       std::string_view kind, const std::vector<std::string>& associations) {
  if (records.empty() && associations.empty())
    return ChangeOutcome{" Nothing modified\n", false, {}};
  std::string text;
  if (!records.empty()) text += fmt::format(" Modified {}...\n", records_name) + Indented(records);
  if (!associations.empty()) {
    text += fmt::format(" Modified {} associations...\n", kind);
    for (const std::string& line : associations) text += line + "\n";
  }
  return ChangeOutcome{text, true, {}};
}

Result<ChangeOutcome> ModifyAccounts(Database& database, const Parsed& parsed) {
  if (parsed.set.empty()) return MakeError(" You didn't give me anything to set");
  auto clusters = ClustersOf(database, parsed);
  if (!clusters) return std::move(clusters).take_error();
  std::vector<Word> record_settings, association_settings;
  std::string parent;
  for (const Word& word : parsed.set) {
    if (Is(word.key, {"Description", "Descr", "Organization", "Org"})) {
      record_settings.push_back(word);
    } else if (Is(word.key, {"Parent"})) {
      parent = NameOf(word.value);
    } else if (IsAssociationSetting(word.key)) {
      association_settings.push_back(word);
    } else if (Is(word.key, {"Name", "Names", "Account", "Accounts"})) {
      return MakeError(" Can't modify the name of an account");
    } else if (Is(word.key, {"Cluster", "Clusters"})) {
      return MakeError(" Can't modify the cluster of an account");
    } else {
      return MakeError(
          fmt::format(" Unknown option: {}{}{}\n Use keyword 'where' to modify condition", word.key,
                      word.op, word.value));
    }
  }
  std::vector<std::string> modified_accounts;
  if (!record_settings.empty()) {
    for (Account& account : database.accounts) {
      if (!AccountMatches(parsed, account)) continue;
      for (const Word& word : record_settings) {
        (Is(word.key, {"Description", "Descr"}) ? account.description : account.organization) =
            NameOf(word.value);
      }
      modified_accounts.push_back(account.name);
    }
  }
  std::vector<std::string> modified_associations;
  if (!association_settings.empty() || !parent.empty()) {
    for (Association* association :
         SelectAssociations(database, Entity::kAccount, parsed, *clusters)) {
      const Account* account = database.FindAccount(association->account);
      if (account && !AccountMatches(parsed, *account)) continue;
      if (!parent.empty()) {
        if (association->account == "root")
          return MakeError(" The root account can't have a parent");
        if (!database.FindAssociation(association->cluster, parent))
          return MakeError(fmt::format(" Parent Account {} doesn't exist.", parent));
        if (WouldCycle(database, *association, parent))
          return MakeError(fmt::format(" Account '{}' can't be moved under its own child '{}'",
                                       association->account, parent));
        association->parent = parent;
      }
      if (Status settings = ApplySettings(database, *association, association_settings); !settings)
        return MakeError(" " + settings.error());
      if (Status qos = CheckQosNames(database, *association); !qos)
        return std::move(qos).take_error();
      modified_associations.push_back(
          association->parent.empty()
              ? fmt::format("  C = {:<10} A = {}", association->cluster, association->account)
              : fmt::format("  C = {:<10} A = {} of {}", association->cluster, association->account,
                            association->parent));
    }
  }
  return Modified("accounts", modified_accounts, "account", modified_associations);
}

Result<ChangeOutcome> ModifyUsers(Database& database, const Parsed& parsed) {
  if (parsed.set.empty()) return MakeError(" You didn't give me anything to set");
  auto clusters = ClustersOf(database, parsed);
  if (!clusters) return std::move(clusters).take_error();
  std::optional<AdminLevel> admin;
  std::string default_account;
  std::vector<Word> association_settings;
  for (const Word& word : parsed.set) {
    if (Is(word.key, {"AdminLevel"})) {
      auto level = ParseAdminLevel(word.value);
      if (!level) return MakeError(" " + level.error());
      admin = *level;
    } else if (Is(word.key, {"DefaultAccount", "DefAccount"})) {
      default_account = NameOf(word.value);
    } else if (IsAssociationSetting(word.key) && !Is(word.key, {"Parent"})) {
      association_settings.push_back(word);
    } else {
      return MakeError(
          fmt::format(" Unknown option: {}{}{}\n Use keyword 'where' to modify condition", word.key,
                      word.op, word.value));
    }
  }
  std::vector<std::string> modified_users;
  if (admin || !default_account.empty()) {
    for (User& user : database.users) {
      if (!UserMatches(parsed, user)) continue;
      if (!Matches(parsed.where, "account", user.default_account) && !parsed.where.count("account"))
        continue;
      if (!default_account.empty()) {
        bool has = std::any_of(database.associations.begin(), database.associations.end(),
                               [&](const Association& association) {
                                 return association.user == user.name &&
                                        association.account == default_account;
                               });
        if (!has)
          return MakeError(fmt::format(
              " Can't modify because these users aren't associated with new default account "
              "'{}'...\n  U = {}",
              default_account, user.name));
        user.default_account = default_account;
      }
      if (admin) user.admin_level = *admin;
      modified_users.push_back(user.name);
    }
  }
  std::vector<std::string> modified_associations;
  if (!association_settings.empty()) {
    for (Association* association :
         SelectAssociations(database, Entity::kUser, parsed, *clusters)) {
      const User* user = database.FindUser(association->user);
      if (user && !UserMatches(parsed, *user)) continue;
      if (Status settings = ApplySettings(database, *association, association_settings); !settings)
        return MakeError(" " + settings.error());
      if (Status qos = CheckQosNames(database, *association); !qos)
        return std::move(qos).take_error();
      modified_associations.push_back(fmt::format("  C = {:<10} A = {:<20} U = {:<9}",
                                                  association->cluster, association->account,
                                                  association->user));
    }
  }
  return Modified("users", modified_users, "user", modified_associations);
}

Result<ChangeOutcome> ModifyQos(Database& database, const Parsed& parsed) {
  if (parsed.set.empty()) return MakeError(" You didn't give me anything to set");
  std::vector<std::string> modified;
  for (Qos& qos : database.qos) {
    if (!Named(parsed.names, qos.name)) continue;
    if (!Matches(parsed.where, "id", std::to_string(qos.id))) continue;
    for (const Word& word : parsed.set) {
      if (!IsQosSetting(word.key))
        return MakeError(
            fmt::format(" Unknown option: {}{}{}\n Use keyword 'where' to modify condition",
                        word.key, word.op, word.value));
      if (Status applied = ApplyQosSetting(qos, word); !applied)
        return MakeError(" " + applied.error());
    }
    for (const std::string& preempted : qos.preempt) {
      if (!database.FindQos(preempted))
        return MakeError(fmt::format(" Unknown QOS '{}' in Preempt (add it first)", preempted));
      if (preempted == qos.name)
        return MakeError(fmt::format(" QOS {} can't preempt itself", qos.name));
    }
    modified.push_back(qos.name);
  }
  if (modified.empty()) return ChangeOutcome{" Nothing modified\n", false, {}};
  return ChangeOutcome{" Modified qos...\n" + Indented(modified), true, {}};
}

Result<ChangeOutcome> ModifyClusters(Database& database, const Parsed& parsed) {
  if (parsed.set.empty()) return MakeError(" You didn't give me anything to set");
  std::vector<std::string> modified;
  for (Association& association : database.associations) {
    if (association.account != "root" || association.is_user()) continue;
    if (!Named(parsed.names, association.cluster)) continue;
    if (Status settings = ApplySettings(database, association, parsed.set); !settings)
      return MakeError(" " + settings.error());
    if (Status qos = CheckQosNames(database, association); !qos) return std::move(qos).take_error();
    modified.push_back(association.cluster);
  }
  if (modified.empty()) return ChangeOutcome{" Nothing modified\n", false, {}};
  return ChangeOutcome{" Setting\n  Default Limits:\n" + DescribeAssociationSettings(parsed.set) +
                           " Modified cluster defaults for associations...\n" + Indented(modified),
                       true,
                       {}};
}

// --- delete ---

void RemoveAssociations(Database& database, const std::function<bool(const Association&)>& gone) {
  database.associations.erase(
      std::remove_if(database.associations.begin(), database.associations.end(), gone),
      database.associations.end());
}

// Accounts in the subtrees of `accounts` on `cluster` (the accounts themselves included).
std::set<std::string> Subtree(const Database& database, const std::string& cluster,
                              std::set<std::string> accounts) {
  bool grew = true;
  while (grew) {
    grew = false;
    for (const Association& association : database.associations) {
      if (association.cluster != cluster || association.is_user()) continue;
      if (accounts.count(association.parent) && accounts.insert(association.account).second)
        grew = true;
    }
  }
  return accounts;
}

// Users whose default account would go while other associations of theirs stay: Slurm's
// refusal, with those users' associations listed.
Status CheckDefaults(const Database& database, bool deleting_accounts) {
  std::string lines;
  for (const User& user : database.users) {
    const Association* kept = nullptr;  // one of the user's associations that stays
    bool default_kept = false;
    for (const Association& association : database.associations) {
      if (association.user != user.name) continue;
      kept = &association;
      if (association.account == user.default_account) default_kept = true;
    }
    if (kept && !default_kept)
      lines += fmt::format("  C = {:<10} A = {:<10} U = {:<9}\n", kept->cluster,
                           user.default_account, user.name);
  }
  if (lines.empty()) return OkStatus();
  return MakeError(
      " Error with request: You can not remove the default account of a user\n" + lines +
      (deleting_accounts
           ? " Please either remove the accounts listed above from list and resubmit,\n or change "
             "these users' default accounts to remove the account(s).\n Changes Discarded"
           : " You must change the default account of these users or remove the users completely "
             "from the affected clusters to allow these changes.\n Changes Discarded"));
}

// Users left with no association at all go too, as Slurm removes them; their names.
std::vector<std::string> DropUsersWithoutAssociations(Database& database) {
  std::vector<std::string> dropped;
  std::erase_if(database.users, [&](const User& user) {
    bool gone =
        std::none_of(database.associations.begin(), database.associations.end(),
                     [&](const Association& association) { return association.user == user.name; });
    if (gone) dropped.push_back(user.name);
    return gone;
  });
  return dropped;
}

// Whether conditions beyond the record's own (names, description, organization) were given:
// then sacctmgr speaks of associations.
bool ByAssociation(const Parsed& parsed, std::initializer_list<std::string_view> record_keys) {
  return std::any_of(parsed.where.begin(), parsed.where.end(), [&](const auto& condition) {
    return !condition.second.empty() &&
           std::find(record_keys.begin(), record_keys.end(), condition.first) == record_keys.end();
  });
}

Result<ChangeOutcome> DeleteAccounts(Database& database, const Parsed& parsed) {
  if (parsed.names.empty() && parsed.where.empty())
    return MakeError(" No conditions given to remove, not executing.");
  auto clusters = ClustersOf(database, parsed);
  if (!clusters) return std::move(clusters).take_error();
  std::set<std::string> names;
  std::string lines;
  for (const std::string& cluster : *clusters) {
    std::set<std::string> chosen;
    for (const Association& association : database.associations) {
      if (association.cluster != cluster || association.is_user()) continue;
      const Account* account = database.FindAccount(association.account);
      if (!Named(parsed.names, association.account) ||
          !Matches(parsed.where, "parent", association.parent) ||
          (account && !AccountMatches(parsed, *account)))
        continue;
      if (association.account == "root")
        return MakeError(
            " You are not allowed to remove the root account.\n Use remove cluster instead.");
      chosen.insert(association.account);
    }
    if (chosen.empty()) continue;
    names.insert(chosen.begin(), chosen.end());
    std::set<std::string> gone = Subtree(database, cluster, chosen);
    for (const Association& association : database.associations) {
      if (association.cluster != cluster || !gone.count(association.account)) continue;
      if (association.is_user())
        lines += fmt::format("  C = {:<10} A = {:<10} U = {:<9}\n", cluster, association.account,
                             association.user);
      else
        lines += fmt::format("  C = {:<10} A = {} of {}\n", cluster, association.account,
                             association.parent);
    }
    RemoveAssociations(database, [&](const Association& association) {
      return association.cluster == cluster && gone.count(association.account);
    });
  }
  if (lines.empty()) return ChangeOutcome{" Nothing deleted\n", false, {}};
  if (Status defaults = CheckDefaults(database, true); !defaults)
    return std::move(defaults).take_error();
  // An account with no association left on any cluster goes.
  std::erase_if(database.accounts, [&](const Account& account) {
    return account.name != "root" &&
           std::none_of(
               database.associations.begin(), database.associations.end(),
               [&](const Association& association) { return association.account == account.name; });
  });
  DropUsersWithoutAssociations(database);
  if (ByAssociation(parsed, {"description", "organization"}))
    return ChangeOutcome{" Deleting account associations...\n" + lines, true, {}};
  return ChangeOutcome{
      " Deleting accounts...\n" + Indented(std::vector<std::string>(names.begin(), names.end())),
      true,
      {}};
}

Result<ChangeOutcome> DeleteUsers(Database& database, const Parsed& parsed) {
  if (parsed.names.empty() && parsed.where.empty())
    return MakeError(" No conditions given to remove, not executing.");
  auto clusters = ClustersOf(database, parsed);
  if (!clusters) return std::move(clusters).take_error();
  std::string lines;
  std::set<std::string> names;
  auto chosen = [&](const Association& association) {
    if (!association.is_user() || !Named(parsed.names, association.user)) return false;
    if (std::find(clusters->begin(), clusters->end(), association.cluster) == clusters->end())
      return false;
    const User* user = database.FindUser(association.user);
    return Matches(parsed.where, "account", association.account) &&
           Matches(parsed.where, "partition", association.partition) &&
           (!user || UserMatches(parsed, *user));
  };
  for (const Association& association : database.associations) {
    if (!chosen(association)) continue;
    names.insert(association.user);
    lines += fmt::format("  C = {:<10} A = {:<10} U = {:<9}\n", association.cluster,
                         association.account, association.user);
  }
  if (lines.empty()) return ChangeOutcome{" Nothing deleted\n", false, {}};
  RemoveAssociations(database, chosen);
  if (Status defaults = CheckDefaults(database, false); !defaults)
    return std::move(defaults).take_error();
  std::vector<std::string> dropped = DropUsersWithoutAssociations(database);
  if (!ByAssociation(parsed, {"defaultaccount", "adminlevel"}))
    return ChangeOutcome{
        " Deleting users...\n" + Indented(std::vector<std::string>(names.begin(), names.end())),
        true,
        {}};
  std::string text = " Deleting user associations...\n" + lines;
  if (!dropped.empty()) text += " Deleting users (No Associations)...\n" + Indented(dropped);
  return ChangeOutcome{text, true, {}};
}

Result<ChangeOutcome> DeleteQos(Database& database, const Parsed& parsed) {
  if (parsed.names.empty() && parsed.where.empty())
    return MakeError(" No conditions given to remove, not executing.");
  std::vector<std::string> deleted;
  for (const Qos& qos : database.qos) {
    if (Named(parsed.names, qos.name) && Matches(parsed.where, "id", std::to_string(qos.id)))
      deleted.push_back(qos.name);
  }
  if (deleted.empty()) return ChangeOutcome{" Nothing deleted\n", false, {}};
  auto gone = [&](const std::string& name) {
    return std::find(deleted.begin(), deleted.end(), name) != deleted.end();
  };
  std::string defaults;
  for (const Association& association : database.associations) {
    if (!gone(association.default_qos)) continue;
    defaults += fmt::format("  DefQOS = {:<10} C = {:<10} A = {:<20} ", association.default_qos,
                            association.cluster, association.account);
    if (association.is_user()) defaults += fmt::format("U = {:<9}", association.user);
    defaults += "\n";
  }
  if (!defaults.empty())
    return MakeError(" Associations listed below have these as their Default QOS.\n" + defaults +
                     " Please either remove the qos' listed above from list and resubmit,\n or "
                     "change the default qos to remove the qos.\n Changes Discarded");
  database.qos.erase(std::remove_if(database.qos.begin(), database.qos.end(),
                                    [&](const Qos& qos) { return gone(qos.name); }),
                     database.qos.end());
  // As Slurm: a deleted QOS leaves every list that named it.
  for (Qos& qos : database.qos) std::erase_if(qos.preempt, gone);
  for (Association& association : database.associations) {
    std::erase_if(association.qos, gone);
    if (gone(association.default_qos)) association.default_qos.clear();
  }
  return ChangeOutcome{" Deleting QOS(s)...\n" + Indented(deleted), true, {}};
}

Result<ChangeOutcome> DeleteClusters(Database& database, const Parsed& parsed) {
  if (parsed.names.empty()) return MakeError(" No conditions given to remove, not executing.");
  std::vector<std::string> deleted;
  for (const Cluster& cluster : database.clusters) {
    if (Named(parsed.names, cluster.name)) deleted.push_back(cluster.name);
  }
  if (deleted.empty()) return ChangeOutcome{" Nothing deleted\n", false, {}};
  auto gone = [&](const std::string& name) {
    return std::find(deleted.begin(), deleted.end(), name) != deleted.end();
  };
  std::erase_if(database.clusters, [&](const Cluster& cluster) { return gone(cluster.name); });
  RemoveAssociations(database,
                     [&](const Association& association) { return gone(association.cluster); });
  if (Status defaults = CheckDefaults(database, false); !defaults)
    return std::move(defaults).take_error();
  DropUsersWithoutAssociations(database);
  return ChangeOutcome{" Deleting clusters...\n" + Indented(deleted), true, {}};
}

}  // namespace

Word SplitWord(std::string_view text) {
  Word word;
  size_t equals = text.find('=');
  if (equals == std::string_view::npos) {
    word.value = std::string(text);
  } else {
    size_t key_end = equals;
    word.op = "=";
    if (equals > 0 && (text[equals - 1] == '+' || text[equals - 1] == '-')) {
      key_end = equals - 1;
      word.op = std::string(1, text[equals - 1]) + "=";
    }
    word.key = std::string(Trim(text.substr(0, key_end)));
    word.value = std::string(text.substr(equals + 1));
  }
  std::string_view value = word.value;
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
      value.back() == value.front())
    word.value = std::string(value.substr(1, value.size() - 2));
  return word;
}

Result<Verb> ParseVerb(std::string_view word) {
  std::string verb = ToLower(word);
  if (verb == "add" || verb == "create") return Verb::kAdd;
  if (verb == "modify" || verb == "update") return Verb::kModify;
  if (verb == "delete" || verb == "remove") return Verb::kDelete;
  if (verb == "load") return Verb::kLoad;
  return MakeError(fmt::format("invalid keyword: {}", word));
}

Result<Entity> ParseEntity(Verb verb, std::string_view word) {
  std::string entity = ToLower(word);
  if (entity == "account" || entity == "accounts" || entity == "acct") return Entity::kAccount;
  if (entity == "user" || entity == "users") return Entity::kUser;
  if (entity == "qos" || entity == "qoss") return Entity::kQos;
  if (entity == "cluster" || entity == "clusters") return Entity::kCluster;
  std::string_view name = verb == Verb::kAdd      ? "add"
                          : verb == Verb::kModify ? "modify"
                          : verb == Verb::kLoad   ? "load"
                                                  : "delete";
  return MakeError(fmt::format(
      "No valid entity in {} command\nInput line must include \"Account\", \"Cluster\", "
      "\"QOS\", or \"User\"",
      name));
}

Result<ChangeOutcome> ApplyChange(Database& database, const ChangeRequest& request) {
  if (request.verb == Verb::kLoad) {
    LoadOptions options;
    for (const std::string& text : request.words) {
      Word word = SplitWord(text);
      if (word.key.empty() && EqualsIgnoreCase(word.value, "clean")) {
        options.clean = true;
      } else if (word.op == "=" && EqualsIgnoreCase(word.key, "cluster")) {
        options.cluster = word.value;
      } else {
        return MakeError(fmt::format(" Unknown option: {}", text));
      }
    }
    auto file = ParseDumpFile(request.file);
    if (!file) return std::move(file).take_error();
    return LoadDumpFile(database, *file, options);
  }
  auto parsed = ParseWords(request);
  if (!parsed) return std::move(parsed).take_error();
  Database copy = database;
  Result<ChangeOutcome> outcome = MakeError("unreachable");
  using Handler = Result<ChangeOutcome> (*)(Database&, const Parsed&);
  static const std::map<std::pair<Verb, Entity>, Handler> handlers = {
      {{Verb::kAdd, Entity::kCluster}, AddClusters},
      {{Verb::kAdd, Entity::kAccount}, AddAccounts},
      {{Verb::kAdd, Entity::kUser}, AddUsers},
      {{Verb::kAdd, Entity::kQos}, AddQos},
      {{Verb::kModify, Entity::kCluster}, ModifyClusters},
      {{Verb::kModify, Entity::kAccount}, ModifyAccounts},
      {{Verb::kModify, Entity::kUser}, ModifyUsers},
      {{Verb::kModify, Entity::kQos}, ModifyQos},
      {{Verb::kDelete, Entity::kCluster}, DeleteClusters},
      {{Verb::kDelete, Entity::kAccount}, DeleteAccounts},
      {{Verb::kDelete, Entity::kUser}, DeleteUsers},
      {{Verb::kDelete, Entity::kQos}, DeleteQos},
  };
  outcome = handlers.at({request.verb, request.entity})(copy, *parsed);
  if (!outcome) return outcome;
  if (outcome->changed) database = std::move(copy);
  return outcome;
}

}  // namespace drover::acct
