// sacctmgr's cluster file; see accounting_dump.h. The layout and words are Slurm 22.05's
// (sacctmgr_dump_cluster and its file loader).
#include "common/accounting_dump.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <utility>

#include "common/accounting_settings.h"
#include "common/text.h"

namespace drover::acct {
namespace {

constexpr std::string_view kHeader =
    "# To edit this file start with a cluster line for the new cluster\n"
    "# Cluster - 'cluster_name':MaxTRESPerJob=node=50\n"
    "# Followed by Accounts you want in this fashion (root is created by default)...\n"
    "# Parent - 'root'\n"
    "# Account - 'cs':MaxTRESPerJob=node=5:MaxJobs=4:MaxTRESMinsPerJob=cpu=20:FairShare=399:"
    "MaxWallDurationPerJob=40:Description='Computer Science':Organization='LC'\n"
    "# Any of the options after a ':' can be left out and they can be in any order.\n"
    "# If you want to add any sub accounts just list the Parent THAT HAS ALREADY\n"
    "# BEEN CREATED before the account line in this fashion...\n"
    "# Parent - 'cs'\n"
    "# Account - 'test':MaxTRESPerJob=node=1:MaxJobs=1:MaxTRESMinsPerJob=cpu=1:FairShare=1:"
    "MaxWallDurationPerJob=1:Description='Test Account':Organization='Test'\n"
    "# To add users to a account add a line like this after a Parent - 'line'\n"
    "# User - 'lipari':MaxTRESPerJob=node=2:MaxJobs=3:MaxTRESMinsPerJob=cpu=4:FairShare=1:"
    "MaxWallDurationPerJob=1\n";

// 'text', or "text" when it holds a single quote.
std::string Quoted(std::string_view text) {
  return text.find('\'') == std::string_view::npos ? fmt::format("'{}'", text)
                                                   : fmt::format("\"{}\"", text);
}

// A TRES list, quoted when it holds a ':' (a typed GRES) so that the loader's split keeps it.
std::string TresValue(const TresList& tres) {
  std::string text = FormatTres(tres);
  return text.find(':') == std::string::npos ? text : Quoted(text);
}

// print_file_add_limits_to_line: only what is set on the association itself, in this order.
std::string Settings(const Association& association) {
  std::string out;
  const Limits& limits = association.limits;
  auto count = [&out](std::string_view key, int64_t value) {
    if (value != kUnset) out += fmt::format(":{}={}", key, value);
  };
  auto tres = [&out](std::string_view key, const TresList& value) {
    if (!value.empty()) out += fmt::format(":{}={}", key, TresValue(value));
  };
  if (!association.default_qos.empty())
    out += fmt::format(":DefaultQOS={}", Quoted(association.default_qos));
  out += fmt::format(":Fairshare={}", association.shares);
  tres("GrpTRESMins", limits.grp_tres_mins);
  tres("GrpTRESRunMins", limits.grp_tres_run_mins);
  tres("GrpTRES", limits.grp_tres);
  count("GrpJobs", limits.grp_jobs);
  count("GrpSubmitJobs", limits.grp_submit_jobs);
  count("GrpWall", limits.grp_wall_minutes);
  tres("MaxTRESMinsPerJob", limits.max_tres_mins);
  tres("MaxTRESPerJob", limits.max_tres);
  tres("MaxTRESPerNode", limits.max_tres_per_node);
  count("MaxJobs", limits.max_jobs);
  count("MaxSubmitJobs", limits.max_submit_jobs);
  count("MaxWallDurationPerJob", limits.max_wall_minutes);
  count("Priority", association.priority);
  if (!association.qos.empty()) out += fmt::format(":QOS={}", Quoted(Join(association.qos, ",")));
  return out;
}

// Splits at ':' outside quotes.
std::vector<std::string> SplitOptions(std::string_view text) {
  std::vector<std::string> parts(1);
  char quote = 0;
  for (char c : text) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == ':') {
      parts.emplace_back();
      continue;
    }
    parts.back() += c;
  }
  return parts;
}

std::string Unquoted(std::string_view text) {
  text = Trim(text);
  if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"') &&
      text.back() == text.front())
    text = text.substr(1, text.size() - 2);
  return std::string(text);
}

// The file's logical lines with their first line number: comments ('#', not "\#") removed, a
// line ending in '\' joined to the next.
std::vector<std::pair<int, std::string>> LogicalLines(std::string_view text) {
  std::vector<std::pair<int, std::string>> lines;
  std::string current;
  int first = 0, number = 0;
  bool joining = false;
  for (const std::string& raw : Split(text, '\n')) {
    ++number;
    std::string line;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '\\' && i + 1 < raw.size() && raw[i + 1] == '#') {
        line += '#';
        ++i;
      } else if (raw[i] == '#') {
        break;
      } else if (raw[i] == '\t') {
        line += ' ';
      } else if (raw[i] != '\r') {
        line += raw[i];
      }
    }
    if (!joining) {
      current.clear();
      first = number;
    }
    std::string_view trimmed = line;
    while (!trimmed.empty() && (trimmed.back() == ' ' || trimmed.back() == '\t'))
      trimmed.remove_suffix(1);
    joining = !trimmed.empty() && trimmed.back() == '\\';
    current += joining ? std::string(trimmed.substr(0, trimmed.size() - 1)) : line;
    if (!joining && !Trim(current).empty()) lines.emplace_back(first, std::string(Trim(current)));
  }
  if (joining && !Trim(current).empty()) lines.emplace_back(first, std::string(Trim(current)));
  return lines;
}

Error LineError(int line, std::string_view message) {
  return MakeError(fmt::format("{}\n Problem with line({})", message, line));
}

std::string Tres(const TresList& tres) {
  return FormatTres(tres);
}

bool SameSettings(const Association& a, const Association& b) {
  const Limits& x = a.limits;
  const Limits& y = b.limits;
  return a.shares == b.shares && a.priority == b.priority && a.qos == b.qos &&
         a.default_qos == b.default_qos && a.parent == b.parent && x.grp_jobs == y.grp_jobs &&
         x.grp_submit_jobs == y.grp_submit_jobs && x.grp_wall_minutes == y.grp_wall_minutes &&
         x.max_jobs == y.max_jobs && x.max_submit_jobs == y.max_submit_jobs &&
         x.max_wall_minutes == y.max_wall_minutes && Tres(x.grp_tres) == Tres(y.grp_tres) &&
         Tres(x.grp_tres_mins) == Tres(y.grp_tres_mins) &&
         Tres(x.grp_tres_run_mins) == Tres(y.grp_tres_run_mins) &&
         Tres(x.max_tres) == Tres(y.max_tres) &&
         Tres(x.max_tres_per_node) == Tres(y.max_tres_per_node) &&
         Tres(x.max_tres_mins) == Tres(y.max_tres_mins);
}

}  // namespace

std::string FormatDumpFile(const Database& database, std::string_view cluster) {
  std::string out(kHeader);
  const Association* root = database.FindAssociation(cluster, "root");
  if (!root) return out;
  out += fmt::format("Cluster - {}{}\n", Quoted(cluster), Settings(*root));
  // Each account with children: its Parent line, its users, then its sub-accounts (each group
  // by name), then each sub-account's own block.
  std::map<std::string, std::vector<const Association*>> children;
  for (const auto& [association, depth] : database.Hierarchy(cluster)) {
    if (depth == 0) continue;
    std::string parent = association->is_user() ? association->account : association->parent;
    children[parent].push_back(association);
  }
  std::function<void(const std::string&)> block = [&](const std::string& account) {
    auto found = children.find(account);
    if (found == children.end()) return;
    out += fmt::format("Parent - {}\n", Quoted(account));
    for (const Association* child : found->second) {
      if (child->is_user()) {
        const User* user = database.FindUser(child->user);
        out += fmt::format("User - {}", Quoted(child->user));
        if (user && !user->default_account.empty())
          out += fmt::format(":DefaultAccount={}", Quoted(user->default_account));
        if (user && user->admin_level != AdminLevel::kNone)
          out += fmt::format(":AdminLevel={}", Quoted(AdminLevelName(user->admin_level)));
      } else {
        const Account* record = database.FindAccount(child->account);
        out += fmt::format("Account - {}:Description={}:Organization={}", Quoted(child->account),
                           Quoted(record ? record->description : child->account),
                           Quoted(record ? record->organization : child->parent));
      }
      out += Settings(*child) + "\n";
    }
    for (const Association* child : found->second)
      if (!child->is_user()) block(child->account);
  };
  block("root");
  return out;
}

Result<DumpFile> ParseDumpFile(std::string_view text) {
  DumpFile file;
  std::string parent = "root";
  for (const auto& [number, line] : LogicalLines(text)) {
    // What accounting stores travels as protobuf strings: UTF-8, printable.
    if (!IsPrintableUtf8(line)) return LineError(number, " The line is not printable UTF-8 text");
    size_t dash = line.find('-');
    if (dash == std::string::npos)
      return MakeError(fmt::format(" Misformatted line({}): {}", number, line));
    std::string object = ToLower(Trim(std::string_view(line).substr(0, dash)));
    std::string_view rest = Trim(std::string_view(line).substr(dash + 1));
    if (rest.empty())
      return MakeError(fmt::format(" Nothing after object name '{}'. line({})",
                                   Trim(std::string_view(line).substr(0, dash)), number));
    std::vector<std::string> parts = SplitOptions(rest);
    std::string name = NameOf(Unquoted(parts.front()));
    if (name.empty()) return LineError(number, " No name given");
    std::vector<Word> options;
    for (size_t i = 1; i < parts.size(); ++i) {
      if (Trim(parts[i]).empty()) continue;
      Word word = SplitWord(Trim(parts[i]));
      if (word.op != "=")
        return LineError(number, fmt::format(" Unknown option: {}", Trim(parts[i])));
      options.push_back(std::move(word));
    }
    bool is_cluster = object == "cluster" || object == "machine";
    if (!is_cluster && file.cluster.empty())
      return LineError(number,
                       " You need to specify a cluster name first with 'Cluster - $NAME' in your "
                       "file");
    if (is_cluster) {
      if (!file.cluster.empty())
        return LineError(number, " You can only add one cluster at a time.");
      file.cluster = name;
      for (Word& word : options) {
        if (!IsAssociationSetting(word.key))
          return LineError(number, fmt::format(" Unknown option: {}={}", word.key, word.value));
        file.cluster_settings.push_back(std::move(word));
      }
      continue;
    }
    if (object == "parent") {
      parent = name;
      continue;
    }
    bool is_user = object == "user";
    if (!is_user && object != "account" && object != "project")
      return MakeError(fmt::format(" Misformatted line({}): {}", number, line));
    DumpEntry entry;
    entry.is_user = is_user;
    entry.name = name;
    entry.parent = parent;
    entry.line = number;
    for (Word& word : options) {
      std::string key = ToLower(word.key);
      if (!is_user && key == "description") {
        entry.description = word.value;
      } else if (!is_user && key == "organization") {
        entry.organization = word.value;
      } else if (is_user && key == "defaultaccount") {
        entry.default_account = NameOf(word.value);
      } else if (is_user && key == "adminlevel") {
        auto level = ParseAdminLevel(word.value);
        if (!level) return LineError(number, " " + level.error());
        entry.admin_level = *level;
      } else if (is_user && (key == "coordinator" || key == "defaultwckey" || key == "wckeys" ||
                             key == "partition")) {
        return LineError(number, fmt::format(" {} is not supported by Drover's sacctmgr yet "
                                             "(remove it from the line to load the rest)",
                                             word.key));
      } else if (IsAssociationSetting(word.key)) {
        entry.settings.push_back(std::move(word));
      } else {
        return LineError(number, fmt::format(" Unknown option: {}={}", word.key, word.value));
      }
    }
    file.entries.push_back(std::move(entry));
  }
  if (file.cluster.empty())
    return MakeError(
        " You need to specify a cluster name first with 'Cluster - $NAME' in your file");
  return file;
}

Result<ChangeOutcome> LoadDumpFile(Database& database, const DumpFile& file,
                                   const LoadOptions& options) {
  Database copy = database;
  std::string cluster = options.cluster.empty() ? file.cluster : NameOf(options.cluster);
  if (options.clean && copy.FindCluster(cluster)) {
    std::erase_if(copy.associations,
                  [&](const Association& association) { return association.cluster == cluster; });
    std::erase_if(copy.clusters, [&](const Cluster& entry) { return entry.name == cluster; });
  }
  std::vector<std::string> accounts_added, users_added;
  size_t associations_added = 0, associations_changed = 0;
  if (!copy.FindCluster(cluster)) copy.AddCluster(cluster);
  auto find = [&](std::string_view account, std::string_view user) -> Association* {
    return const_cast<Association*>(copy.FindAssociation(cluster, account, user));
  };
  auto apply = [&](Association& association, const std::vector<Word>& settings,
                   int line) -> Status {
    for (const Word& word : settings)
      if (Status applied = ApplyAssociationSetting(association, word); !applied)
        return line ? LineError(line, " " + applied.error()) : applied;
    return OkStatus();
  };
  {
    Association* root = find("root", "");
    Association before = *root;
    if (Status applied = apply(*root, file.cluster_settings, 0); !applied)
      return std::move(applied).take_error();
    if (!SameSettings(before, *root)) ++associations_changed;
  }
  for (const DumpEntry& entry : file.entries) {
    if (!find(entry.parent, ""))
      return LineError(entry.line,
                       fmt::format(" line({}) You need to add this parent ({}) as a child before "
                                   "you can add children to it.",
                                   entry.line, entry.parent));
    std::string account = entry.is_user ? entry.parent : entry.name;
    std::string user = entry.is_user ? entry.name : "";
    if (!entry.is_user) {
      if (entry.name == "root")
        return LineError(entry.line,
                         " root is the cluster's own account: set its limits on "
                         "the Cluster line");
      if (const Account* found = copy.FindAccount(entry.name)) {
        Account& record = const_cast<Account&>(*found);
        if (entry.description) record.description = *entry.description;
        if (entry.organization) record.organization = *entry.organization;
      } else {
        copy.accounts.push_back({entry.name, entry.description.value_or(entry.name),
                                 entry.organization.value_or(entry.parent)});
        accounts_added.push_back(entry.name);
      }
    } else {
      if (const User* found = copy.FindUser(entry.name)) {
        User& record = const_cast<User&>(*found);
        if (entry.default_account) record.default_account = *entry.default_account;
        if (entry.admin_level) record.admin_level = *entry.admin_level;
      } else {
        copy.users.push_back({entry.name, entry.default_account.value_or(entry.parent),
                              entry.admin_level.value_or(AdminLevel::kNone)});
        users_added.push_back(entry.name);
      }
    }
    Association* association = find(account, user);
    if (association && !entry.is_user && association->parent != entry.parent)
      return LineError(entry.line,
                       fmt::format(" Account {} is under {} on cluster {}, not {} (move it with "
                                   "sacctmgr modify account {} set parent={} first)",
                                   entry.name, association->parent, cluster, entry.parent,
                                   entry.name, entry.parent));
    if (!association) {
      Association made;
      made.id = copy.next_association_id++;
      made.cluster = cluster;
      made.account = account;
      made.user = user;
      made.parent = entry.parent;
      copy.associations.push_back(std::move(made));
      association = &copy.associations.back();
      ++associations_added;
      if (Status applied = apply(*association, entry.settings, entry.line); !applied)
        return std::move(applied).take_error();
    } else {
      Association before = *association;
      if (Status applied = apply(*association, entry.settings, entry.line); !applied)
        return std::move(applied).take_error();
      if (!SameSettings(before, *association)) ++associations_changed;
    }
  }
  // Every user keeps an association with its default account: one the file named without
  // such an association is refused; one whose associations a clean load removed takes another
  // of its own, or goes with its last.
  for (const DumpEntry& entry : file.entries) {
    if (!entry.is_user || !entry.default_account) continue;
    bool found = false;
    for (const Association& association : copy.associations)
      found = found ||
              (association.user == entry.name && association.account == *entry.default_account);
    if (!found)
      return LineError(
          entry.line,
          fmt::format(" User {} has no association with its DefaultAccount {} (add "
                      "a User line for {} after Parent - '{}')",
                      entry.name, *entry.default_account, entry.name, *entry.default_account));
  }
  std::erase_if(copy.users, [&](User& user) {
    const Association* any = nullptr;
    for (const Association& association : copy.associations) {
      if (association.user != user.name) continue;
      if (association.account == user.default_account) return false;
      if (!any) any = &association;
    }
    if (any) user.default_account = any->account;
    return any == nullptr;
  });
  // The QOS the associations name must exist (the file holds none, as Slurm's).
  for (const Association& association : copy.associations) {
    if (association.cluster != cluster) continue;
    std::vector<std::string> names = association.qos;
    if (!association.default_qos.empty()) names.push_back(association.default_qos);
    for (const std::string& name : names) {
      if (copy.FindQos(name)) continue;
      if (!options.add_missing_qos)
        return MakeError(fmt::format(
            " QOS {} (named by {}) does not exist: add it first with sacctmgr add qos {}", name,
            association.is_user() ? association.user + " under " + association.account
                                  : association.account,
            name));
      Qos qos;
      qos.id = copy.next_qos_id++;
      qos.name = name;
      qos.description = name;
      copy.qos.push_back(std::move(qos));
    }
  }
  ChangeOutcome outcome;
  outcome.text = fmt::format("For cluster {}\n", cluster);
  if (!accounts_added.empty())
    outcome.text += fmt::format(" Accounts added: {}\n", Join(accounts_added, ", "));
  if (!users_added.empty())
    outcome.text += fmt::format(" Users added: {}\n", Join(users_added, ", "));
  if (associations_added)
    outcome.text += fmt::format(" Associations added: {}\n", associations_added);
  if (associations_changed)
    outcome.text += fmt::format(" Associations changed: {}\n", associations_changed);
  outcome.changed = options.clean || associations_added || associations_changed ||
                    !accounts_added.empty() || !users_added.empty() ||
                    !database.FindCluster(cluster);
  if (!outcome.changed) outcome.text += " Nothing new added.\n";
  database = std::move(copy);
  return outcome;
}

}  // namespace drover::acct
