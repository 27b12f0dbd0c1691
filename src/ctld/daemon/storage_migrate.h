// `drover storage migrate` (droverctld --migrate-from DIR): copies a SQLite state (drover.db in
// DIR) into the PostgreSQL database slurm.conf's Storage* keys name, table by table, and checks
// that every row arrived. The database must hold no state yet, and no controller may be running
// on it: the copy holds the leader lease while it runs, so none starts in the middle of it.
#pragma once

#include <functional>
#include <string>

#include "common/cluster_config.h"
#include "common/result.h"

namespace drover::ctld {

// `say` gets one line per table copied ("jobs: 1234 rows"). Errors say what to do.
Status MigrateSqliteToPostgres(const std::string& sqlite_directory, const StorageSettings& target,
                               const std::function<void(const std::string&)>& say);

}  // namespace drover::ctld
