// The controller's durable store: tables of key -> bytes, changed only by group commits.
// The engine loop and the service see this interface alone, never SQLite; a Commit that returns
// OK must never be lost, and a failed one must never leave part of its batch behind.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/cluster_config.h"
#include "common/result.h"

namespace drover::ctld {

// One group commit: every put and delete of one engine batch, applied atomically.
// Puts are applied first, then deletes, so a key both put and deleted in one batch (a job
// submitted and finished within one batch) ends up absent.
struct WriteBatch {
  struct Put {
    std::string table;
    std::string key;
    std::string value;
  };
  struct Delete {
    std::string table;
    std::string key;
  };
  std::vector<Put> puts;
  std::vector<Delete> deletes;

  bool empty() const { return puts.empty() && deletes.empty(); }
};

using Table = std::vector<std::pair<std::string, std::string>>;  // key, value; sorted by key

// Not thread-safe, by design: each instance has one caller at a time. In droverctld the engine
// loop's instance is read at start-up (Restore) and then used by its commit thread alone (the
// commits, and the scripts read back for launches); a second instance on the same database
// serves sacct's history to the query threads, one at a time under the service's history mutex.
class Store {
 public:
  virtual ~Store() = default;
  // Durable when it returns OK: survives kill -9 of the process (and, for SQLite, power loss per
  // synchronous=FULL in WAL mode). All of the batch or none of it.
  virtual Status Commit(const WriteBatch& batch) = 0;
  // Every row of `table` (empty when the table has none).
  virtual Result<Table> Load(const std::string& table) = 0;
  // At most `limit` rows of `table` whose keys sort after `after` (every key sorts after "") and
  // before `before` (empty: no bound), in key order: a reader pages through a large table
  // (sacct's history) or one range of an index without loading it whole.
  virtual Result<Table> LoadRange(const std::string& table, const std::string& after,
                                  const std::string& before, size_t limit) = 0;
  Result<Table> LoadPage(const std::string& table, const std::string& after, size_t limit) {
    return LoadRange(table, after, "", limit);
  }
  // One row's value; nullopt when the key is absent.
  virtual Result<std::optional<std::string>> Get(const std::string& table,
                                                 const std::string& key) = 0;
};

// Tables the controller uses; others are refused with an error naming them.
// partitions: scontrol's changes; accounting: sacctmgr's database (one record, "database").
// history_index: keys that find job_history's records by job or array, owner and end time
// (HistoryIndexKeys in ctld/records.h), each with an empty value.
inline constexpr std::string_view kStoreTables[] = {
    "jobs",         "job_history", "scripts",    "environments", "nodes",        "usage",
    "reservations", "meta",        "partitions", "accounting",   "history_index"};

// The layout of the stored data, kept in meta's "schema_version"; a store opens a database of
// this version or older (migrating it) and refuses a newer one. 1: the first layout (no
// version row). 2: the accounting table. 3: history_index (droverctld builds it from the
// history it finds when meta has no "history_indexed" row).
inline constexpr int kStoreSchemaVersion = 3;

// OK when `table` is one of kStoreTables, else an error naming it and the known tables.
inline Status CheckStoreTable(std::string_view table) {
  std::string known;
  for (std::string_view name : kStoreTables) {
    if (name == table) return OkStatus();
    known += known.empty() ? "" : ", ";
    known += name;
  }
  return MakeError("unknown store table '" + std::string(table) + "' (tables: " + known + ")");
}

// CheckStoreTable for every put and delete of `batch`, so nothing is applied when one is wrong.
inline Status CheckStoreTables(const WriteBatch& batch) {
  for (const WriteBatch::Put& put : batch.puts) {
    if (Status status = CheckStoreTable(put.table); !status) return status;
  }
  for (const WriteBatch::Delete& del : batch.deletes) {
    if (Status status = CheckStoreTable(del.table); !status) return status;
  }
  return OkStatus();
}

// Opens (creating if needed) the SQLite store in `directory` (StateSaveLocation): file
// drover.db, WAL mode, synchronous=FULL, a busy timeout. Errors name the path and what to do
// ("cannot create /var/spool/x: Permission denied; set StateSaveLocation to a writable folder").
Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& directory);

// Opens the PostgreSQL store named by `conninfo` (libpq's "host=... port=... dbname=..."),
// creating its tables in that database when they are missing. The server's synchronous_commit
// makes a Commit durable when it returns OK. Errors say where the server was looked for and
// which slurm.conf keys set that. With `fence_term`, every commit first checks that this term
// still holds the leader lease (leader_lease.h) and fails, applying nothing, when it does not.
Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string& conninfo,
                                                 std::optional<int64_t> fence_term = std::nullopt);

// libpq's connection string for slurm.conf's Storage* keys, the password read from
// StoragePassFile (an error names the key and the file when it cannot be read).
Result<std::string> PostgresConnInfo(const StorageSettings& storage);

// The store slurm.conf selects (StorageType): SQLite in `state_directory`, or PostgreSQL
// (fenced by `fence_term` when given).
Result<std::unique_ptr<Store>> OpenConfiguredStore(
    const StorageSettings& storage, const std::string& state_directory,
    std::optional<int64_t> fence_term = std::nullopt);

// For tests: an in-memory store that keeps committed batches and injects failures, so a test can
// check that the engine replies only after durability and recovers what was really synced.
// Like every Store it belongs to one thread: configure it before handing it to the engine.
class MemoryStore : public Store {
 public:
  Status Commit(const WriteBatch& batch) override;
  Result<Table> Load(const std::string& table) override;
  Result<Table> LoadRange(const std::string& table, const std::string& after,
                          const std::string& before, size_t limit) override;
  Result<std::optional<std::string>> Get(const std::string& table, const std::string& key) override;

  // The next `count` commits fail with an error and apply nothing.
  void FailNextCommits(int count) { failures_left_ = count; }
  // Of the batches committed from now on, the first `count` are kept and every later one is
  // dropped while its Commit still returns OK: what a process killed before syncing leaves.
  void CrashAfter(size_t count) {
    crashed_ = true;
    kept_before_crash_ = count;
  }
  // The batches that reached the store, in commit order (failed and dropped ones excluded).
  const std::vector<WriteBatch>& committed() const { return committed_; }

 private:
  void Apply(const WriteBatch& batch);

  std::map<std::string, std::map<std::string, std::string>> tables_;
  std::vector<WriteBatch> committed_;
  int failures_left_ = 0;
  bool crashed_ = false;
  size_t kept_before_crash_ = 0;
};

}  // namespace drover::ctld
