// sacctmgr dump and load: a cluster's accounts, users and associations as Slurm's cluster file
// ("Cluster - 'tux':Fairshare=1:QOS='normal'", "Parent - 'root'", "Account - 'physics':...",
// "User - 'bob':DefaultAccount='physics':..."), written in Slurm's order and read back with
// Slurm's rules (comments, continuation lines, quotes). QOS are not in the file, as in Slurm.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/accounting.h"
#include "common/accounting_change.h"
#include "common/result.h"

namespace drover::acct {

// The file for `cluster` (which must exist): Slurm's comment header, then the cluster line with
// its root association's settings and every association under it, each with only the settings
// set on it.
std::string FormatDumpFile(const Database& database, std::string_view cluster);

// One Account or User line of a file, under the Parent line before it.
struct DumpEntry {
  bool is_user = false;
  std::string name, parent;
  std::vector<Word> settings;  // the association's (Fairshare, limits, QOS, DefaultQOS)
  std::optional<std::string> description, organization;  // accounts
  std::optional<std::string> default_account;            // users
  std::optional<AdminLevel> admin_level;                 // users
  int line = 0;
};

struct DumpFile {
  std::string cluster;
  std::vector<Word> cluster_settings;  // the root association's
  std::vector<DumpEntry> entries;      // in the file's order: parents before children
};

// An error names the line as sacctmgr does (" Unknown option: X ... line(7)") and what to do.
Result<DumpFile> ParseDumpFile(std::string_view text);

struct LoadOptions {
  std::string cluster;  // Cluster=: instead of the file's
  bool clean = false;   // remove the cluster's associations first
  // QOS the file names that the database lacks are added with Slurm's defaults (drover sim);
  // otherwise the load is refused.
  bool add_missing_qos = false;
};

// Adds what the file holds to `database` (accounts, users, associations; settings of those
// that exist are changed to the file's), the cluster too when new. Nothing changes on an error.
Result<ChangeOutcome> LoadDumpFile(Database& database, const DumpFile& file,
                                   const LoadOptions& options);

}  // namespace drover::acct
