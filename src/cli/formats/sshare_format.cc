// sshare's table from the fair-share tree (see priority_formats.h): Slurm 22.05's fields and
// widths (print_fields: right-justified numbers, a space after every column, '+' marking cut
// text), its tree order and indentation, -p/-P parsable lines and -l's extra columns.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "cli/formats/priority_formats.h"
#include "common/text.h"

namespace drover::cli {
namespace {

enum class Column {
  kAccount,
  kCluster,
  kEffectiveUsage,
  kFairShare,
  kLevelFs,
  kId,
  kNormShares,
  kNormUsage,
  kPartition,
  kRawShares,
  kRawUsage,
  kUser,
  kGrpTresMins,
  kGrpTresRaw,
  kTresRunMins
};

struct Field {
  int width;  // negative: left-justified
  std::string_view name;
  Column column;
};

// Slurm's table, in its order: a prefix of a name ("Eff", "A") picks the first that matches.
constexpr Field kFields[] = {
    {-20, "Account", Column::kAccount},
    {10, "Cluster", Column::kCluster},
    {13, "EffectvUsage", Column::kEffectiveUsage},
    {10, "FairShare", Column::kFairShare},
    {10, "LevelFS", Column::kLevelFs},
    {6, "ID", Column::kId},
    {11, "NormShares", Column::kNormShares},
    {11, "NormUsage", Column::kNormUsage},
    {12, "Partition", Column::kPartition},
    {10, "RawShares", Column::kRawShares},
    {11, "RawUsage", Column::kRawUsage},
    {10, "User", Column::kUser},
    {30, "GrpTRESMins", Column::kGrpTresMins},
    {30, "GrpTRESRaw", Column::kGrpTresRaw},
    {30, "TRESRunMins", Column::kTresRunMins},
};

// -m adds the Partition column after User, as sshare's PRINT_PARTITIONS does.
std::string DefaultFields(const SshareOptions& options) {
  std::string user = options.partitions ? "A,User,Partition," : "A,User,";
  if (!options.long_format) return user + "RawShares,NormShares,RawUsage,Eff,Fairshare";
  return user + (options.fair_tree ? "RawShares,NormShares,RawUsage,NormUsage,Eff,Fairshare,"
                                     "LevelFS,GrpTRESMins,TRESRunMins"
                                   : "RawShares,NormShares,RawUsage,NormUsage,Eff,Fairshare,"
                                     "GrpTRESMins,TRESRunMins");
}

Result<std::vector<Field>> ParseFields(std::string_view list) {
  std::vector<Field> fields;
  for (const std::string& item : Split(list, ',')) {
    std::string name(Trim(item));
    if (name.empty()) continue;
    int width = 0;
    if (size_t percent = name.find('%'); percent != std::string::npos) {
      width = std::atoi(name.c_str() + percent + 1);
      name.resize(percent);
    }
    const Field* found = nullptr;
    for (const Field& field : kFields)
      if (StartsWithIgnoreCase(field.name, name)) {
        found = &field;
        break;
      }
    if (!found) return MakeError(fmt::format("Invalid field requested: \"{}\"", name));
    Field field = *found;
    if (width) field.width = width;
    fields.push_back(field);
  }
  return fields;
}

// One printed value: text, or nothing (NULL in Slurm: blank, or empty when parsable).
struct Cell {
  std::optional<std::string> text;
  bool number = false;  // a double: %f, or %e when it does not fit
  double value = 0;
};

// print_fields_double's table form: "%*f", or as much of "%e" as the width holds (C's printf
// rules throughout, a negative width included, as Slurm passes it on).
std::string DoubleText(double value, int width) {
  int size = std::abs(width);
  auto print = [](const char* format, int w, int precision, double v) {
    char buffer[512];
    std::snprintf(buffer, sizeof(buffer), format, w, precision, v);
    return std::string(buffer);
  };
  std::string text = print("%*.*f", size, 6, value);
  if (static_cast<int>(text.size()) <= size)
    return print(width < 0 ? "%-*.*f" : "%*.*f", size, 6, value);
  int fit = size;
  int wide = static_cast<int>(print("%*.*e", size, size, value).size());
  if (wide > size) fit -= wide - size;
  return print(width < 0 ? "%-*.*e" : "%*.*e", fit, fit, value);
}

std::string TableText(const Cell& cell, int width) {
  int size = std::abs(width);
  if (cell.number && cell.text) return DoubleText(cell.value, width);
  std::string text = cell.text.value_or(" ");
  if (cell.text && static_cast<int>(text.size()) > size) {
    text.resize(size);
    if (size > 0) text[size - 1] = '+';
  }
  text = text.substr(0, size);
  return width < 0 ? fmt::format("{:<{}}", text, size) : fmt::format("{:>{}}", text, size);
}

std::string ParsableText(const Cell& cell) {
  if (!cell.text) return "";
  return cell.number ? fmt::format("{:f}", cell.value) : *cell.text;
}

Cell Number(double value) {
  return Cell{fmt::format("{:f}", value), true, value};
}

// A row to print: the share, its index in the controller's list (the ID), and the account name
// indented by its parent's depth among the rows printed before it (slurmdb_tree_name_get).
struct Row {
  const v1::Share* share;
  size_t index;
  std::string tree_name;
};

Cell Value(const Row& row, Column column, const SshareOptions& options) {
  const v1::Share& share = *row.share;
  bool user = !share.user().empty();
  switch (column) {
    case Column::kAccount:
      return Cell{row.tree_name};
    case Column::kCluster:
      return Cell{options.cluster_name};
    case Column::kEffectiveUsage:
      return Number(share.effective_usage());
    case Column::kFairShare:
      if (options.fair_tree && !user) return Cell{};
      return Number(share.fairshare());
    case Column::kLevelFs:
      return Number(share.level_fs());
    case Column::kId:
      return Cell{std::to_string(row.index + 1)};
    case Column::kNormShares:
      return Number(share.norm_shares());
    case Column::kNormUsage:
      return Number(share.norm_usage());
    case Column::kPartition:
      return Cell{};
    case Column::kRawShares:
      if (share.parent().empty() && !user) return Cell{};  // root's shares print blank
      return Cell{std::to_string(share.raw_shares())};
    case Column::kRawUsage:
      return Cell{std::to_string(static_cast<uint64_t>(std::max(0.0, share.raw_usage())))};
    case Column::kUser:
      return user ? Cell{share.user()} : Cell{};
    case Column::kGrpTresMins:
      return Cell{share.grp_tres_mins()};
    case Column::kGrpTresRaw:
      return Cell{share.grp_tres_raw()};
    case Column::kTresRunMins:
      return Cell{share.tres_run_mins()};
  }
  return Cell{};
}

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& item) { return EqualsIgnoreCase(item, name); });
}

// Depth-first from root: under each account its users, then its sub-accounts, each by name.
std::vector<size_t> TreeOrder(std::span<const v1::Share> shares) {
  std::map<std::string, std::vector<size_t>> children;  // account -> child rows
  std::vector<size_t> roots;
  for (size_t i = 0; i < shares.size(); ++i) {
    const v1::Share& share = shares[i];
    if (share.parent().empty() && share.user().empty())
      roots.push_back(i);
    else
      children[share.parent()].push_back(i);
  }
  auto before = [&](size_t a, size_t b) {
    const v1::Share &x = shares[a], &y = shares[b];
    bool x_user = !x.user().empty(), y_user = !y.user().empty();
    if (x_user != y_user) return x_user;
    return x_user ? x.user() < y.user() : x.account() < y.account();
  };
  for (auto& [account, rows] : children) std::sort(rows.begin(), rows.end(), before);
  std::vector<size_t> order;
  std::set<std::string> visited;
  std::vector<size_t> stack(roots.rbegin(), roots.rend());
  while (!stack.empty()) {
    size_t i = stack.back();
    stack.pop_back();
    order.push_back(i);
    const v1::Share& share = shares[i];
    if (!share.user().empty() || !visited.insert(share.account()).second) continue;
    auto it = children.find(share.account());
    if (it == children.end()) continue;
    for (auto child = it->second.rbegin(); child != it->second.rend(); ++child)
      if (*child != i) stack.push_back(*child);
  }
  return order;
}

std::vector<Row> Rows(std::span<const v1::Share> shares, const SshareOptions& options) {
  std::vector<Row> rows;
  std::map<std::string, size_t> indent;  // printed account -> length of its indentation
  for (size_t i : TreeOrder(shares)) {
    const v1::Share& share = shares[i];
    bool user = !share.user().empty();
    if (user && !options.users.empty() && !Contains(options.users, share.user())) continue;
    if (!options.accounts.empty() && !Contains(options.accounts, share.account())) continue;
    auto parent = indent.find(share.parent());
    size_t spaces = share.parent().empty() || parent == indent.end() ? 0 : parent->second + 1;
    if (!user) indent[share.account()] = spaces;
    if (options.users_only && !user) continue;
    rows.push_back({&share, i, std::string(spaces, ' ') + share.account()});
  }
  return rows;
}

}  // namespace

Result<std::string> FormatSshare(std::span<const v1::Share> shares, const SshareOptions& options) {
  auto fields = ParseFields(options.fields.empty() ? DefaultFields(options) : options.fields);
  if (!fields) return std::move(fields).take_error();
  const bool parsable = options.parsable || options.parsable2;
  // One line: each field's text, then the delimiter ('|' or a space); -P drops the last one.
  auto line = [&](auto text_of) {
    std::string out;
    for (size_t i = 0; i < fields->size(); ++i) {
      out += text_of((*fields)[i]);
      bool last = i + 1 == fields->size();
      if (!(options.parsable2 && last)) out += parsable ? '|' : ' ';
    }
    return out + "\n";
  };
  std::string out;
  if (!options.no_header) {
    out += line([&](const Field& field) {
      if (parsable) return std::string(field.name);
      int size = std::abs(field.width);
      std::string name(field.name.substr(0, size));
      return field.width < 0 ? fmt::format("{:<{}}", name, size)
                             : fmt::format("{:>{}}", name, size);
    });
    if (!parsable)
      out += line([](const Field& field) { return std::string(std::abs(field.width), '-'); });
  }
  for (const Row& row : Rows(shares, options))
    out += line([&](const Field& field) {
      Cell cell = Value(row, field.column, options);
      return parsable ? ParsableText(cell) : TableText(cell, field.width);
    });
  return out;
}

std::string SshareJson(std::span<const v1::Share> shares, const SshareOptions& options) {
  nlohmann::json list = nlohmann::json::array();
  for (const Row& row : Rows(shares, options)) {
    const v1::Share& share = *row.share;
    bool user = !share.user().empty();
    nlohmann::json item = {{"id", row.index + 1},
                           {"cluster", options.cluster_name},
                           {"name", user ? share.user() : share.account()},
                           {"parent", user ? share.account() : share.parent()},
                           {"partition", ""},
                           {"shares", share.raw_shares()},
                           {"shares_normalized", share.norm_shares()},
                           {"usage", static_cast<uint64_t>(std::max(0.0, share.raw_usage()))},
                           {"usage_normalized", share.norm_usage()},
                           {"effective_usage", share.effective_usage()},
                           {"type", nlohmann::json::array({user ? "USER" : "ASSOCIATION"})}};
    nlohmann::json fairshare = {{"level", share.level_fs()}};
    if (user || !options.fair_tree) fairshare["factor"] = share.fairshare();
    item["fairshare"] = fairshare;
    list.push_back(std::move(item));
  }
  return nlohmann::json{{"shares", {{"shares", list}}}}.dump(2) + "\n";
}

}  // namespace drover::cli
