// What sacctmgr show prints, as Slurm 22.05 prints it, from the accounting database: accounts,
// users, QOS, associations (and their tree) and clusters, with format=, -n, -p and -P. Pure:
// the database and the options in, text out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/accounting.h"
#include "common/result.h"

namespace drover::cli {

enum class AccountingListing { kAccount, kUser, kQos, kAssociation, kCluster };

struct SacctmgrShowOptions {
  AccountingListing listing = AccountingListing::kAssociation;
  std::vector<std::string> format;  // format= entries ("Account%20"); empty: the default
  bool no_header = false;           // -n
  bool parsable = false;            // -p: '|' after every field
  bool parsable2 = false;           // -P: '|' between fields
  bool with_associations = false;   // withassoc / -s (account and user listings)
  bool tree = false;                // show assoc tree
  bool only_defaults = false;       // show assoc onlydefaults
  bool without_limits = false;      // WOLimits / WOPLimits: the default format without limits
  // Conditions ("where"): empty lists match everything.
  std::vector<std::string> names, accounts, users, clusters, partitions, parents, qos, ids;
  std::vector<std::string> descriptions, organizations, admin_levels, default_accounts;
  // The controller's address, for show cluster's ControlHost and ControlPort.
  std::string control_host;
  int control_port = 0;
};

// The table, or an error for an unknown format field ("Unknown field 'X'").
Result<std::string> FormatAccounting(const acct::Database& database,
                                     const SacctmgrShowOptions& options);

// "HH:MM:SS" or "D-HH:MM:SS" from minutes or seconds, as sacctmgr prints walls and grace times.
std::string AccountingMinutes(int64_t minutes);
std::string AccountingSeconds(int64_t seconds);

}  // namespace drover::cli
