// See storage_migrate.h.
#include "ctld/daemon/storage_migrate.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string_view>

#include "ctld/store/leader_lease.h"
#include "ctld/store/store.h"

namespace drover::ctld {
namespace {

constexpr size_t kPage = 2000;  // rows read and committed at a time

// The rows of `table` in `store`, counted a page at a time.
Result<size_t> CountRows(Store& store, const std::string& table) {
  size_t rows = 0;
  std::string after;
  while (true) {
    Result<Table> page = store.LoadPage(table, after, kPage);
    if (!page) return std::move(page).take_error();
    rows += page->size();
    if (page->size() < kPage) return rows;
    after = page->back().first;
  }
}

}  // namespace

Status MigrateSqliteToPostgres(const std::string& sqlite_directory, const StorageSettings& target,
                               const std::function<void(const std::string&)>& say) {
  if (target.kind != StorageKind::kPostgres)
    return MakeError(
        "slurm.conf keeps the state in SQLite: set StorageType=postgresql and the Storage* keys "
        "of the database to copy into (docs/configuration.md)");
  const std::filesystem::path file = std::filesystem::path(sqlite_directory) / "drover.db";
  if (!std::filesystem::exists(file))
    return MakeError(
        fmt::format("{} does not exist: give the StateSaveLocation that holds the "
                    "SQLite state (--from DIR)",
                    file.string()));
  Result<std::string> conninfo = PostgresConnInfo(target);
  if (!conninfo) return std::move(conninfo).take_error();
  // The lease, so that no controller starts on the database while it fills.
  auto lease = OpenLeaderLease(*conninfo, "drover-storage-migrate", "", std::chrono::hours(1));
  if (!lease) return std::move(lease).take_error();
  Result<std::optional<int64_t>> term = (*lease)->TryAcquire();
  if (!term) return std::move(term).take_error();
  if (!*term) {
    Result<LeaseState> state = (*lease)->Read();
    return MakeError(
        fmt::format("a controller ({}) is running on database {}: stop every droverctld first",
                    state ? state->holder : "?", target.database));
  }
  struct Release {
    LeaderLease& lease;
    int64_t term;
    ~Release() { (void)lease.Release(term); }
  } release{**lease, **term};

  auto source = OpenSqliteStore(sqlite_directory);
  if (!source) return std::move(source).take_error();
  auto destination = OpenPostgresStore(*conninfo, **term);
  if (!destination) return std::move(destination).take_error();
  // Only an empty database: its meta holds nothing but the layout's version its opening wrote.
  for (std::string_view name : kStoreTables) {
    const std::string table(name);
    Result<Table> first = (*destination)->LoadPage(table, "", 2);
    if (!first) return std::move(first).take_error();
    bool empty = first->empty() || (table == "meta" && first->size() == 1 &&
                                    first->front().first == "schema_version");
    if (!empty)
      return MakeError(fmt::format(
          "database {} already holds a state (table {} has rows): migrate into an empty "
          "database (createdb -O {} NEWNAME, then StorageLoc=NEWNAME)",
          target.database, table, target.user));
  }
  std::map<std::string, size_t> copied;
  for (std::string_view name : kStoreTables) {
    const std::string table(name);
    std::string after;
    while (true) {
      Result<Table> page = (*source)->LoadPage(table, after, kPage);
      if (!page) return std::move(page).take_error();
      if (page->empty()) break;
      WriteBatch batch;
      for (auto& [key, value] : *page) batch.puts.push_back({table, key, value});
      if (Status committed = (*destination)->Commit(batch); !committed) return committed;
      copied[table] += page->size();
      after = page->back().first;
      if (page->size() < kPage) break;
    }
  }
  // Every row is there: counted again on the database.
  for (std::string_view name : kStoreTables) {
    const std::string table(name);
    Result<size_t> rows = CountRows(**destination, table);
    if (!rows) return std::move(rows).take_error();
    if (*rows != copied[table])
      return MakeError(fmt::format("table {}: {} rows copied but {} found in the database", table,
                                   copied[table], *rows));
    say(fmt::format("{}: {} rows", table, *rows));
  }
  return OkStatus();
}

}  // namespace drover::ctld
