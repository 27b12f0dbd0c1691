// sacctmgr show: rows chosen from the database, one field table (sacctmgr's common.c names,
// headers and widths), and print_fields' layout: right-justified unless the width is negative,
// a space after every cell, strings cut with a '+', numbers never cut.
#include "cli/formats/sacctmgr_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "common/text.h"

namespace drover::cli {
namespace {

using acct::kUnset;

struct Row {
  const acct::Account* account = nullptr;
  const acct::User* user = nullptr;
  const acct::Qos* qos = nullptr;
  std::optional<acct::Association> association;  // with what it inherits, as sacctmgr shows
  std::string cluster;
  int depth = 0;  // show assoc tree: the Account column's indent
};

struct Context {
  const acct::Database& database;
  const SacctmgrShowOptions& options;
};

using Getter = std::function<std::string(const Row&, const Context&)>;

struct Field {
  std::vector<std::pair<std::string_view, size_t>> names;  // keyword, shortest prefix taken
  std::string_view header;
  int width;        // negative: left-justified
  bool cut = true;  // strings are cut with '+'; numbers are not
  Getter value;
};

std::string Count(int64_t value) {
  return value == kUnset ? "" : std::to_string(value);
}

std::string Tres(const TresList& tres) {
  return tres.empty() ? "" : FormatTres(tres);
}

// One TRES of a list, as the old single-TRES columns (GrpCPUs, MaxNodes) show it.
std::string TresPart(const TresList& tres, std::string_view name) {
  return tres.Has(name) ? std::to_string(tres.Get(name)) : "";
}

std::string Double(double value) {
  return value < 0 ? "" : fmt::format("{:f}", value);
}

const acct::Limits* LimitsOf(const Row& row) {
  if (row.association) return &row.association->limits;
  if (row.qos) return &row.qos->limits;
  return nullptr;
}

Getter Limit(std::function<std::string(const acct::Limits&)> get) {
  return [get = std::move(get)](const Row& row, const Context&) {
    const acct::Limits* limits = LimitsOf(row);
    return limits ? get(*limits) : std::string();
  };
}

Getter QosOnly(std::function<std::string(const acct::Qos&)> get) {
  return [get = std::move(get)](const Row& row, const Context&) {
    return row.qos ? get(*row.qos) : std::string();
  };
}

Getter AssociationOnly(std::function<std::string(const acct::Association&)> get) {
  return [get = std::move(get)](const Row& row, const Context&) {
    return row.association ? get(*row.association) : std::string();
  };
}

std::string AccountName(const Row& row, const Context& context) {
  std::string name;
  if (row.association)
    name = row.association->account;
  else if (row.account)
    name = row.account->name;
  if (context.options.tree && row.association) return std::string(row.depth, ' ') + name;
  return name;
}

std::string UserName(const Row& row) {
  if (row.user) return row.user->name;
  if (row.association) return row.association->user;
  return "";
}

// sacctmgr's common.c field table, in its order (the first match wins).
const std::vector<Field>& Fields() {
  static const std::vector<Field> fields = {
      {{{"Account", 3}, {"Acct", 4}}, "Account", 10, true, AccountName},
      {{{"AdminLevel", 2}},
       "Admin",
       9,
       true,
       [](const Row& row, const Context&) {
         return row.user ? std::string(acct::AdminLevelName(row.user->admin_level))
                         : std::string();
       }},
      {{{"Clusters", 2}}, "Cluster", 10, true,
       [](const Row& row, const Context&) { return row.cluster; }},
      {{{"ControlHost", 8}},
       "ControlHost",
       15,
       true,
       [](const Row&, const Context& context) { return context.options.control_host; }},
      {{{"ControlPort", 8}},
       "ControlPort",
       12,
       false,
       [](const Row&, const Context& context) {
         return std::to_string(context.options.control_port);
       }},
      {{{"DefaultAccount", 8}}, "Def Acct", 10, true,
       [](const Row& row, const Context&) {
         return row.user ? row.user->default_account : std::string();
       }},
      {{{"DefaultQOS", 8}}, "Def QOS", 9, true,
       AssociationOnly([](const acct::Association& a) { return a.default_qos; })},
      {{{"Description", 3}},
       "Descr",
       20,
       true,
       [](const Row& row, const Context&) {
         if (row.qos) return row.qos->description;
         return row.account ? row.account->description : std::string();
       }},
      {{{"Flags", 2}}, "Flags", 20, true,
       QosOnly([](const acct::Qos& qos) { return acct::FormatQosFlags(qos.flags); })},
      {{{"GraceTime", 3}}, "GraceTime", 10, false,
       QosOnly([](const acct::Qos& qos) { return AccountingSeconds(qos.grace_seconds); })},
      {{{"GrpCPUs", 6}}, "GrpCPUs", 8, false,
       Limit([](const acct::Limits& l) { return TresPart(l.grp_tres, "cpu"); })},
      {{{"GrpCPUMins", 7}}, "GrpCPUMins", 11, false,
       Limit([](const acct::Limits& l) { return TresPart(l.grp_tres_mins, "cpu"); })},
      {{{"GrpCPURunMins", 7}}, "GrpCPURunMins", 13, false,
       Limit([](const acct::Limits& l) { return TresPart(l.grp_tres_run_mins, "cpu"); })},
      {{{"GrpTRES", 7}}, "GrpTRES", 13, true,
       Limit([](const acct::Limits& l) { return Tres(l.grp_tres); })},
      {{{"GrpTRESMins", 7}}, "GrpTRESMins", 13, true,
       Limit([](const acct::Limits& l) { return Tres(l.grp_tres_mins); })},
      {{{"GrpTRESRunMins", 7}}, "GrpTRESRunMins", 13, true,
       Limit([](const acct::Limits& l) { return Tres(l.grp_tres_run_mins); })},
      {{{"GrpJobs", 4}}, "GrpJobs", 7, false,
       Limit([](const acct::Limits& l) { return Count(l.grp_jobs); })},
      {{{"GrpMemory", 4}}, "GrpMem", 7, false,
       Limit([](const acct::Limits& l) { return TresPart(l.grp_tres, "mem"); })},
      {{{"GrpNodes", 4}}, "GrpNodes", 8, false,
       Limit([](const acct::Limits& l) { return TresPart(l.grp_tres, "node"); })},
      {{{"GrpSubmitJobs", 4}}, "GrpSubmit", 9, false,
       Limit([](const acct::Limits& l) { return Count(l.grp_submit_jobs); })},
      {{{"GrpWall", 4}}, "GrpWall", 11, false, Limit([](const acct::Limits& l) {
         return l.grp_wall_minutes == kUnset ? "" : AccountingMinutes(l.grp_wall_minutes);
       })},
      {{{"ID", 2}},
       "ID",
       6,
       false,
       [](const Row& row, const Context&) {
         if (row.qos) return std::to_string(row.qos->id);
         return row.association ? std::to_string(row.association->id) : std::string();
       }},
      {{{"MaxCPUMinsPerJob", 7}}, "MaxCPUMins", 11, false,
       Limit([](const acct::Limits& l) { return TresPart(l.max_tres_mins, "cpu"); })},
      {{{"MaxCPUsPerJob", 7}}, "MaxCPUs", 8, false,
       Limit([](const acct::Limits& l) { return TresPart(l.max_tres, "cpu"); })},
      {{{"MaxTRES", 7}, {"MaxTRESPerJob", 11}}, "MaxTRES", 13, true,
       Limit([](const acct::Limits& l) { return Tres(l.max_tres); })},
      {{{"MaxTRESPerNode", 11}}, "MaxTRESPerNode", 14, true,
       Limit([](const acct::Limits& l) { return Tres(l.max_tres_per_node); })},
      {{{"MaxTRESMinsPerJob", 8}}, "MaxTRESMins", 13, true,
       Limit([](const acct::Limits& l) { return Tres(l.max_tres_mins); })},
      {{{"MaxTRESPerAccount", 11}, {"MaxTRESPA", 9}}, "MaxTRESPA", 13, true,
       QosOnly([](const acct::Qos& qos) { return Tres(qos.max_tres_per_account); })},
      {{{"MaxTRESPerUser", 11}, {"MaxTRESPU", 9}}, "MaxTRESPU", 13, true,
       QosOnly([](const acct::Qos& qos) { return Tres(qos.max_tres_per_user); })},
      {{{"MaxJobs", 4}}, "MaxJobs", 7, false,
       Limit([](const acct::Limits& l) { return Count(l.max_jobs); })},
      {{{"MaxJobsPerAccount", 11}, {"MaxJobsPA", 9}}, "MaxJobsPA", 9, false,
       QosOnly([](const acct::Qos& qos) { return Count(qos.max_jobs_per_account); })},
      {{{"MaxJobsPerUser", 11}, {"MaxJobsPU", 9}}, "MaxJobsPU", 9, false,
       QosOnly([](const acct::Qos& qos) { return Count(qos.limits.max_jobs); })},
      {{{"MaxNodesPerJob", 4}}, "MaxNodes", 8, false,
       Limit([](const acct::Limits& l) { return TresPart(l.max_tres, "node"); })},
      {{{"MaxSubmitJobs", 4}}, "MaxSubmit", 9, false,
       Limit([](const acct::Limits& l) { return Count(l.max_submit_jobs); })},
      {{{"MaxSubmitJobsPerAccount", 17}, {"MaxSubmitJobsPA", 15}, {"MaxSubmitPA", 11}},
       "MaxSubmitPA",
       11,
       false,
       QosOnly([](const acct::Qos& qos) { return Count(qos.max_submit_per_account); })},
      {{{"MaxSubmitJobsPerUser", 10}, {"MaxSubmitJobsPU", 10}, {"MaxSubmitPU", 6}},
       "MaxSubmitPU",
       11,
       false,
       QosOnly([](const acct::Qos& qos) { return Count(qos.limits.max_submit_jobs); })},
      {{{"MaxWallDurationPerJob", 4}}, "MaxWall", 11, false, Limit([](const acct::Limits& l) {
         return l.max_wall_minutes == kUnset ? "" : AccountingMinutes(l.max_wall_minutes);
       })},
      {{{"MinTRESPerJob", 7}}, "MinTRES", 13, true,
       QosOnly([](const acct::Qos& qos) { return Tres(qos.min_tres); })},
      {{{"Name", 2}},
       "Name",
       10,
       true,
       [](const Row& row, const Context& context) {
         if (row.qos) return row.qos->name;
         if (row.user) return row.user->name;
         return AccountName(row, context);
       }},
      {{{"Organization", 1}}, "Org", 20, true,
       [](const Row& row, const Context&) {
         return row.account ? row.account->organization : std::string();
       }},
      {{{"ParentID", 7}},
       "ParentID",
       8,
       false,
       [](const Row& row, const Context& context) -> std::string {
         if (!row.association) return "";
         const acct::Association* parent = context.database.Parent(*row.association);
         return parent ? std::to_string(parent->id) : "";
       }},
      {{{"ParentName", 7}}, "ParentName", 10, true,
       AssociationOnly([](const acct::Association& a) { return a.is_user() ? "" : a.parent; })},
      {{{"Partition", 4}}, "Partition", 10, true,
       AssociationOnly([](const acct::Association& a) { return a.partition; })},
      {{{"PreemptMode", 8}}, "PreemptMode", 11, true,
       QosOnly([](const acct::Qos& qos) { return qos.preempt_mode; })},
      {{{"Preempt", 7}}, "Preempt", 10, true,
       QosOnly([](const acct::Qos& qos) { return Join(qos.preempt, ","); })},
      {{{"PreemptExemptTime", 8}}, "PreemptExemptTime", 19, false,
       QosOnly([](const acct::Qos& qos) {
         return qos.preempt_exempt_seconds == kUnset
                    ? std::string()
                    : AccountingSeconds(qos.preempt_exempt_seconds);
       })},
      {{{"Priority", 3}},
       "Priority",
       10,
       false,
       [](const Row& row, const Context&) {
         if (row.qos) return std::to_string(row.qos->priority);
         return row.association ? Count(row.association->priority) : std::string();
       }},
      {{{"QOSLevel", 3}}, "QOS", 20, true,
       AssociationOnly([](const acct::Association& a) { return Join(a.qos, ","); })},
      {{{"RPC", 1}}, "RPC", 5, false, [](const Row&, const Context&) {
         return std::string("9728");  // Slurm 22.05's protocol version, as its commands report
       }},
      {{{"Share", 1}, {"FairShare", 2}}, "Share", 9, false,
       AssociationOnly([](const acct::Association& a) { return std::to_string(a.shares); })},
      {{{"UsageFactor", 6}}, "UsageFactor", 11, false,
       QosOnly([](const acct::Qos& qos) { return Double(qos.usage_factor); })},
      {{{"UsageThreshold", 6}}, "UsageThres", 10, false,
       QosOnly([](const acct::Qos& qos) { return Double(qos.usage_threshold); })},
      {{{"User", 1}}, "User", 10, true, [](const Row& row, const Context&) { return UserName(row); }},
  };
  return fields;
}

struct Column {
  const Field* field;
  int width;
};

Result<std::vector<Column>> Columns(const std::vector<std::string>& entries) {
  std::vector<Column> columns;
  for (const std::string& entry : entries) {
    for (const std::string& item : Split(entry, ',')) {
      std::string_view text = Trim(item);
      if (text.empty()) continue;
      std::string_view name = text;
      std::optional<int> width;
      if (size_t percent = text.find('%'); percent != std::string_view::npos) {
        name = text.substr(0, percent);
        int parsed = std::atoi(std::string(text.substr(percent + 1)).c_str());
        if (parsed != 0) width = parsed;
      }
      const Field* found = nullptr;
      for (const Field& field : Fields()) {
        for (const auto& [keyword, shortest] : field.names) {
          if (name.size() >= shortest && StartsWithIgnoreCase(keyword, name)) {
            found = &field;
            break;
          }
        }
        if (found) break;
      }
      if (!found) return MakeError(fmt::format("Unknown field '{}'", name));
      columns.push_back({found, width.value_or(found->width)});
    }
  }
  return columns;
}

std::string Cell(std::string_view text, int width, bool cut) {
  size_t size = static_cast<size_t>(std::abs(width));
  std::string value(text);
  if (cut && value.size() > size) value = value.substr(0, size - 1) + "+";
  return width < 0 ? fmt::format("{:<{}} ", value, size) : fmt::format("{:>{}} ", value, size);
}

std::string Render(const std::vector<Column>& columns, const std::vector<Row>& rows,
                   const Context& context) {
  const SacctmgrShowOptions& options = context.options;
  bool parsable = options.parsable || options.parsable2;
  auto line = [&](const std::function<std::string(const Column&)>& text,
                  const std::function<std::string(const Column&)>& cell) {
    std::string out;
    for (size_t i = 0; i < columns.size(); ++i) {
      if (parsable) {
        out += text(columns[i]);
        if (options.parsable || i + 1 < columns.size()) out += '|';
      } else {
        out += cell(columns[i]);
      }
    }
    return out + "\n";
  };
  std::string out;
  if (!options.no_header) {
    out += line([](const Column& column) { return std::string(column.field->header); },
                [](const Column& column) {  // cut to the width without a '+': "GrpTRESRunMin"
                  size_t width = static_cast<size_t>(std::abs(column.width));
                  return Cell(column.field->header.substr(0, width), column.width, false);
                });
    if (!parsable)
      out += line({}, [](const Column& column) {
        return std::string(static_cast<size_t>(std::abs(column.width)), '-') + " ";
      });
  }
  for (const Row& row : rows) {
    out += line([&](const Column& column) { return column.field->value(row, context); },
                [&](const Column& column) {
                  return Cell(column.field->value(row, context), column.width, column.field->cut);
                });
  }
  return out;
}

bool Selects(const std::vector<std::string>& wanted, const std::string& value) {
  return wanted.empty() || std::find(wanted.begin(), wanted.end(), value) != wanted.end();
}

bool SelectsAssociation(const SacctmgrShowOptions& options, const acct::Association& association,
                        const acct::Association& effective) {
  if (!Selects(options.clusters, association.cluster)) return false;
  if (!Selects(options.accounts, association.account)) return false;
  if (!options.users.empty() && !Selects(options.users, association.user)) return false;
  if (!Selects(options.partitions, association.partition)) return false;
  if (!options.parents.empty() &&
      (association.is_user() || !Selects(options.parents, association.parent)))
    return false;
  if (!Selects(options.ids, std::to_string(association.id))) return false;
  if (!options.qos.empty() &&
      std::none_of(effective.qos.begin(), effective.qos.end(),
                   [&](const std::string& qos) { return Selects(options.qos, qos); }))
    return false;
  return true;
}

// Every cluster's hierarchy, clusters by name (slurmdb_sort_hierarchical_assoc_list).
std::vector<std::pair<const acct::Association*, int>> Hierarchy(const acct::Database& database) {
  std::vector<std::string> clusters;
  for (const acct::Cluster& cluster : database.clusters) clusters.push_back(cluster.name);
  std::sort(clusters.begin(), clusters.end());
  std::vector<std::pair<const acct::Association*, int>> order;
  for (const std::string& cluster : clusters) {
    auto tree = database.Hierarchy(cluster);
    order.insert(order.end(), tree.begin(), tree.end());
  }
  return order;
}

Row AssociationRow(const acct::Database& database, const acct::Association& association,
                   int depth) {
  Row row;
  row.association = database.Effective(association);
  row.cluster = association.cluster;
  row.depth = depth;
  row.account = database.FindAccount(association.account);
  if (association.is_user()) row.user = database.FindUser(association.user);
  return row;
}

bool UserSelected(const SacctmgrShowOptions& options, const acct::User& user) {
  if (!Selects(options.names, user.name) ||
      !Selects(options.default_accounts, user.default_account))
    return false;
  if (options.admin_levels.empty()) return true;
  return std::any_of(options.admin_levels.begin(), options.admin_levels.end(),
                     [&](const std::string& level) {
                       auto parsed = acct::ParseAdminLevel(level);
                       return parsed && *parsed == user.admin_level;
                     });
}

bool AccountSelected(const SacctmgrShowOptions& options, const acct::Account& account) {
  auto matches = [](const std::vector<std::string>& wanted, const std::string& value) {
    return wanted.empty() || std::any_of(wanted.begin(), wanted.end(), [&](const std::string& w) {
             return EqualsIgnoreCase(w, value);
           });
  };
  return Selects(options.names, account.name) &&
         matches(options.descriptions, account.description) &&
         matches(options.organizations, account.organization);
}

std::vector<Row> Rows(const acct::Database& database, const SacctmgrShowOptions& options) {
  std::vector<Row> rows;
  switch (options.listing) {
    case AccountingListing::kAssociation:
      for (const auto& [association, depth] : Hierarchy(database)) {
        acct::Association effective = database.Effective(*association);
        if (!SelectsAssociation(options, *association, effective)) continue;
        if (options.only_defaults && association->is_user()) {
          const acct::User* user = database.FindUser(association->user);
          if (!user || user->default_account != association->account) continue;
        }
        rows.push_back(AssociationRow(database, *association, depth));
      }
      break;
    case AccountingListing::kAccount: {
      std::vector<const acct::Account*> accounts;
      for (const acct::Account& account : database.accounts)
        if (AccountSelected(options, account)) accounts.push_back(&account);
      std::sort(accounts.begin(), accounts.end(),
                [](const auto* a, const auto* b) { return a->name < b->name; });
      const auto order = Hierarchy(database);
      for (const acct::Account* account : accounts) {
        if (!options.with_associations) {
          Row row;
          row.account = account;
          rows.push_back(row);
          continue;
        }
        for (const auto& [association, depth] : order) {
          if (association->account != account->name) continue;
          acct::Association effective = database.Effective(*association);
          if (!SelectsAssociation(options, *association, effective)) continue;
          rows.push_back(AssociationRow(database, *association, depth));
        }
      }
      break;
    }
    case AccountingListing::kUser: {
      std::vector<const acct::User*> users;
      for (const acct::User& user : database.users)
        if (UserSelected(options, user)) users.push_back(&user);
      std::sort(users.begin(), users.end(),
                [](const auto* a, const auto* b) { return a->name < b->name; });
      const auto order = Hierarchy(database);
      for (const acct::User* user : users) {
        if (!options.with_associations) {
          Row row;
          row.user = user;
          rows.push_back(row);
          continue;
        }
        for (const auto& [association, depth] : order) {
          if (association->user != user->name) continue;
          acct::Association effective = database.Effective(*association);
          if (!SelectsAssociation(options, *association, effective)) continue;
          rows.push_back(AssociationRow(database, *association, depth));
        }
      }
      break;
    }
    case AccountingListing::kQos:
      for (const acct::Qos& qos : database.qos) {
        if (!Selects(options.names, qos.name) || !Selects(options.ids, std::to_string(qos.id)))
          continue;
        Row row;
        row.qos = &qos;
        rows.push_back(row);
      }
      break;
    case AccountingListing::kCluster:
      for (const acct::Cluster& cluster : database.clusters) {
        if (!Selects(options.names, cluster.name)) continue;
        Row row;
        row.cluster = cluster.name;
        if (const acct::Association* root = database.FindAssociation(cluster.name, "root"))
          row.association = database.Effective(*root);
        rows.push_back(row);
      }
      break;
  }
  return rows;
}

// The default formats of sacctmgr 22.05 (account_functions.c and its siblings).
std::vector<std::string> DefaultFormat(const SacctmgrShowOptions& options) {
  switch (options.listing) {
    case AccountingListing::kAccount:
      if (options.with_associations)
        return {
            "Acc,Des,O,Cl,ParentN,U,Share,Priority,GrpJ,GrpN,GrpCPUs,GrpMEM,GrpS,GrpWall,"
            "GrpCPUMins,MaxJ,MaxN,MaxCPUs,MaxS,MaxW,MaxCPUMins,QOS,DefaultQOS"};
      return {"Acc,Des,O"};
    case AccountingListing::kUser:
      if (options.with_associations)
        return {
            "U,DefaultA,Ad,Cl,Acc,Part,Share,Priority,MaxJ,MaxN,MaxCPUs,MaxS,MaxW,MaxCPUMins,"
            "QOS,DefaultQOS"};
      return {"U,DefaultA,Ad"};
    case AccountingListing::kQos:
      return {
          "Name,Prio,GraceT,Preempt,PreemptE,PreemptM,Flags%40,UsageThres,UsageFactor,"
          "GrpTRES,GrpTRESMins,GrpTRESRunMins,GrpJ,GrpS,GrpW,MaxTRES,MaxTRESPerN,"
          "MaxTRESMins,MaxW,MaxTRESPU,MaxJobsPU,MaxSubmitPU,MaxTRESPA,MaxJobsPA,MaxSubmitPA,"
          "MinTRES"};
    case AccountingListing::kAssociation:
      if (options.without_limits) return {"Cluster,Account,User,Part"};
      return {
          "Cluster,Account,User,Part,Share,Priority,GrpJ,GrpTRES,GrpS,GrpWall,GrpTRESMins,"
          "MaxJ,MaxTRES,MaxTRESPerN,MaxS,MaxW,MaxTRESMins,QOS,DefaultQOS,GrpTRESRunMins"};
    case AccountingListing::kCluster:
      if (options.without_limits) return {"Cl,Controlh,Controlp,RPC"};
      return {
          "Cl,Controlh,Controlp,RPC,Fa,GrpJ,GrpTRES,GrpS,MaxJ,MaxTRES,MaxS,MaxW,QOS,"
          "DefaultQOS"};
  }
  return {};
}

}  // namespace

std::string AccountingMinutes(int64_t minutes) {
  return AccountingSeconds(minutes * 60);
}

std::string AccountingSeconds(int64_t seconds) {
  int64_t days = seconds / 86400, hours = seconds / 3600 % 24, minutes = seconds / 60 % 60;
  if (days > 0) return fmt::format("{}-{:02}:{:02}:{:02}", days, hours, minutes, seconds % 60);
  return fmt::format("{:02}:{:02}:{:02}", hours, minutes, seconds % 60);
}

Result<std::string> FormatAccounting(const acct::Database& database,
                                     const SacctmgrShowOptions& options) {
  auto columns = Columns(options.format.empty() ? DefaultFormat(options) : options.format);
  if (!columns) return std::move(columns).take_error();
  // show assoc tree: the Account column is 20 wide and left-justified, as sacctmgr makes it.
  if (options.tree)
    for (Column& column : *columns)
      if (column.field->header == "Account" && column.width == column.field->width)
        column.width = -20;
  Context context{database, options};
  return Render(*columns, Rows(database, options), context);
}

}  // namespace drover::cli
