// The SQLite Store: one WITHOUT ROWID table per store table in StateSaveLocation/drover.db, in WAL
// mode with synchronous=FULL so a Commit that returns OK survives kill -9 and power loss.
// It must never return OK before COMMIT has synced, nor leave a half-applied batch behind.

#include <fcntl.h>
#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "common/text.h"
#include "ctld/store/store.h"

namespace drover::ctld {
namespace {

constexpr std::string_view kDatabaseFile = "drover.db";
// Another process (a backup, a sqlite3 shell) may hold the write lock briefly; wait, don't fail.
constexpr int kBusyTimeoutMs = 5000;
constexpr std::string_view kWritableHint = "set StateSaveLocation to a writable folder";

struct DatabaseCloser {
  // close_v2 defers the close until every statement is finalized, whatever the order.
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StatementFinalizer {
  void operator()(sqlite3_stmt* statement) const { sqlite3_finalize(statement); }
};
using Database = std::unique_ptr<sqlite3, DatabaseCloser>;
using Statement = std::unique_ptr<sqlite3_stmt, StatementFinalizer>;

// The cached statements of one table, prepared once at open.
struct TableStatements {
  Statement upsert;
  Statement erase;
  Statement select;
  Statement get;  // one row by key
};

// Resets a cached statement when it leaves scope, so an error mid-step never leaves it holding
// bindings to the caller's buffers or an open read.
class StatementUse {
 public:
  explicit StatementUse(sqlite3_stmt* statement) : statement_(statement) {}
  ~StatementUse() {
    sqlite3_reset(statement_);
    sqlite3_clear_bindings(statement_);
  }
  StatementUse(const StatementUse&) = delete;
  StatementUse& operator=(const StatementUse&) = delete;

 private:
  sqlite3_stmt* statement_;
};

// What a person can do about an error at open, by SQLite's primary result code.
std::string OpenHint(int code) {
  switch (code & 0xff) {
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return std::string(kWritableHint);
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return "it is not a Drover store or it is damaged; restore it from a backup";
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return "another process holds it; stop any other droverctld using this StateSaveLocation";
    default:
      return "check the disk and the file's permissions";
  }
}

Error OpenError(const std::string& path, sqlite3* db, int code) {
  const char* message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(code);
  return MakeError("cannot open " + path + ": " + message + "; " + OpenHint(code));
}

// The state holds every job's script and environment: only the controller's user may read it.
// Takes group's and others' permissions away from `path` (the owner's stay as they are).
Status MakePrivate(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return OkStatus();  // a -wal or -shm file SQLite has not made yet
    return MakeError("cannot read the mode of " + path + ": " + std::strerror(errno));
  }
  if ((info.st_mode & 077) == 0) return OkStatus();
  if (::chmod(path.c_str(), info.st_mode & 0700) != 0)
    return MakeError("cannot make " + path +
                     " private to its owner (chmod go-rwx): " + std::strerror(errno));
  return OkStatus();
}

// The database, made 0600 before SQLite opens it: SQLite gives its -wal and -shm files the
// database's mode. Files left from before are made private too.
Status PrepareDatabase(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return MakeError("cannot open " + path + ": " + std::strerror(errno));
  ::close(fd);
  for (const char* suffix : {"", "-wal", "-shm"})
    if (Status status = MakePrivate(path + suffix); !status) return status;
  return OkStatus();
}

// Creates the folder if needed, makes it private (0700 when new) and checks we can
// write there, so the error names the folder rather than SQLite's vaguer "unable to open
// database file".
Status PrepareDirectory(const std::string& directory) {
  if (directory.empty())
    return MakeError("StateSaveLocation is empty; " + std::string(kWritableHint));
  std::error_code error;
  std::filesystem::create_directories(directory, error);  // made private below
  if (error) {
    return MakeError("cannot create " + directory + ": " + error.message() + "; " +
                     std::string(kWritableHint));
  }
  if (!std::filesystem::is_directory(directory, error)) {
    return MakeError(directory + " is not a folder; " + std::string(kWritableHint));
  }
  if (Status status = MakePrivate(directory); !status) return status;
  if (access(directory.c_str(), W_OK | X_OK) != 0) {
    return MakeError("cannot write to " + directory + ": " + std::strerror(errno) + "; " +
                     std::string(kWritableHint));
  }
  return OkStatus();
}

class SqliteStore : public Store {
 public:
  SqliteStore(std::string path, Database db) : path_(std::move(path)), db_(std::move(db)) {}

  Status Configure();
  Status Commit(const WriteBatch& batch) override;
  Result<Table> Load(const std::string& table) override;
  Result<Table> LoadRange(const std::string& table, const std::string& after,
                          const std::string& before, size_t limit) override;
  Result<std::optional<std::string>> Get(const std::string& table, const std::string& key) override;

 private:
  Status Execute(const char* sql, std::string_view doing);
  Status SetJournalModeWal();
  // Brings an older database to kStoreSchemaVersion, or refuses a newer one.
  Status Migrate();
  Status CreateTable(std::string_view table);
  Result<Statement> Prepare(const std::string& sql);
  Result<Table> ReadRows(sqlite3_stmt* select, const std::string& table, size_t limit);
  Status ApplyBatch(const WriteBatch& batch);
  Status Put(const WriteBatch::Put& put);
  Status Delete(const WriteBatch::Delete& del);
  void Rollback();
  Error SqlError(std::string_view doing) const {
    return MakeError("cannot " + std::string(doing) + " in " + path_ + ": " +
                     sqlite3_errmsg(db_.get()));
  }

  std::string path_;
  Database db_;  // Declared before the statements, so it is closed after they are finalized.
  std::map<std::string, TableStatements, std::less<>> statements_;
};

Status SqliteStore::Configure() {
  sqlite3_extended_result_codes(db_.get(), 1);
  sqlite3_busy_timeout(db_.get(), kBusyTimeoutMs);
  if (Status status = SetJournalModeWal(); !status) return status;
  // FULL, not WAL's usual NORMAL: NORMAL may lose the last commits on power loss, and a job ID
  // we have replied with must survive that.
  if (Status status = Execute("PRAGMA synchronous=FULL", "set synchronous=FULL"); !status) {
    return status;
  }
  for (std::string_view table : kStoreTables) {
    if (Status status = CreateTable(table); !status) return status;
  }
  return Migrate();
}

Status SqliteStore::Migrate() {
  auto stored = Get("meta", "schema_version");
  if (!stored) return std::move(stored).take_error();
  int version = 1;  // written before versions were kept
  if (*stored) {
    std::optional<int64_t> parsed = ParseInt64(**stored);
    if (!parsed || *parsed < 1)
      return MakeError(
          fmt::format("{}: unreadable schema_version '{}' in table meta", path_, **stored));
    version = static_cast<int>(*parsed);
  }
  if (version > kStoreSchemaVersion)
    return MakeError(fmt::format(
        "{} holds schema version {}, written by a newer Drover; this droverctld reads versions "
        "up to {} (run the newer droverctld, or restore a backup of the state)",
        path_, version, kStoreSchemaVersion));
  if (version == kStoreSchemaVersion) return OkStatus();
  // 1 -> 2: the accounting table, created above; the controller starts its accounting from
  // slurm.conf's ClusterName when the table has no database yet. 2 -> 3: history_index, created
  // above; droverctld fills it from the history at start (it has no "history_indexed" row).
  WriteBatch batch;
  batch.puts.push_back({"meta", "schema_version", std::to_string(kStoreSchemaVersion)});
  return Commit(batch);
}

Status SqliteStore::SetJournalModeWal() {
  Result<Statement> pragma = Prepare("PRAGMA journal_mode=WAL");
  if (!pragma) return std::move(pragma).take_error();
  int code = sqlite3_step(pragma->get());
  if (code != SQLITE_ROW) return OpenError(path_, db_.get(), code);
  // SQLite answers with the mode it kept; some filesystems (NFS without shared memory) refuse WAL.
  const unsigned char* mode = sqlite3_column_text(pragma->get(), 0);
  if (mode == nullptr || std::string_view(reinterpret_cast<const char*>(mode)) != "wal") {
    return MakeError("cannot use WAL mode for " + path_ +
                     "; put StateSaveLocation on a local filesystem");
  }
  return OkStatus();
}

Status SqliteStore::CreateTable(std::string_view table) {
  // Table names come from kStoreTables only, never from input, so they are safe to splice in.
  const std::string name(table);
  const std::string create = "CREATE TABLE IF NOT EXISTS " + name +
                             "(key TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID";
  if (Status status = Execute(create.c_str(), "create table " + name); !status) return status;
  TableStatements statements;
  Result<Statement> upsert =
      Prepare("INSERT OR REPLACE INTO " + name + "(key, value) VALUES(?, ?)");
  Result<Statement> erase = Prepare("DELETE FROM " + name + " WHERE key = ?");
  Result<Statement> select = Prepare("SELECT key, value FROM " + name + " ORDER BY key");
  Result<Statement> get = Prepare("SELECT value FROM " + name + " WHERE key = ?1");
  if (!upsert) return std::move(upsert).take_error();
  if (!erase) return std::move(erase).take_error();
  if (!select) return std::move(select).take_error();
  if (!get) return std::move(get).take_error();
  statements_[name] = {std::move(*upsert), std::move(*erase), std::move(*select), std::move(*get)};
  return OkStatus();
}

Status SqliteStore::Execute(const char* sql, std::string_view doing) {
  int code = sqlite3_exec(db_.get(), sql, nullptr, nullptr, nullptr);
  if (code != SQLITE_OK) return SqlError(doing);
  return OkStatus();
}

Result<Statement> SqliteStore::Prepare(const std::string& sql) {
  sqlite3_stmt* raw = nullptr;
  int code = sqlite3_prepare_v3(db_.get(), sql.c_str(), static_cast<int>(sql.size()),
                                SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
  Statement statement(raw);
  if (code != SQLITE_OK) return OpenError(path_, db_.get(), code);
  return statement;
}

Status SqliteStore::Commit(const WriteBatch& batch) {
  if (Status status = CheckStoreTables(batch); !status) return status;
  if (batch.empty()) return OkStatus();
  // IMMEDIATE takes the write lock now, so a busy database fails here, before any work.
  if (Status status = Execute("BEGIN IMMEDIATE", "start a transaction"); !status) return status;
  Status applied = ApplyBatch(batch);
  if (applied) applied = Execute("COMMIT", "commit");
  if (!applied) Rollback();
  return applied;
}

Status SqliteStore::ApplyBatch(const WriteBatch& batch) {
  for (const WriteBatch::Put& put : batch.puts) {
    if (Status status = Put(put); !status) return status;
  }
  for (const WriteBatch::Delete& del : batch.deletes) {
    if (Status status = Delete(del); !status) return status;
  }
  return OkStatus();
}

Status SqliteStore::Put(const WriteBatch::Put& put) {
  sqlite3_stmt* upsert = statements_.find(put.table)->second.upsert.get();
  StatementUse use(upsert);
  // SQLITE_STATIC: the batch outlives the step, and StatementUse clears the bindings after it.
  sqlite3_bind_text64(upsert, 1, put.key.data(), put.key.size(), SQLITE_STATIC, SQLITE_UTF8);
  // data() is never null, so an empty value binds a zero-length blob, not NULL.
  sqlite3_bind_blob64(upsert, 2, put.value.data(), put.value.size(), SQLITE_STATIC);
  if (sqlite3_step(upsert) != SQLITE_DONE) return SqlError("write " + put.table + "/" + put.key);
  return OkStatus();
}

Status SqliteStore::Delete(const WriteBatch::Delete& del) {
  sqlite3_stmt* erase = statements_.find(del.table)->second.erase.get();
  StatementUse use(erase);
  sqlite3_bind_text64(erase, 1, del.key.data(), del.key.size(), SQLITE_STATIC, SQLITE_UTF8);
  if (sqlite3_step(erase) != SQLITE_DONE) return SqlError("delete " + del.table + "/" + del.key);
  return OkStatus();
}

void SqliteStore::Rollback() {
  // SQLite may already have rolled back (on some I/O errors); ROLLBACK outside a transaction
  // would only add a second, misleading error. A failed ROLLBACK is left to SQLite's recovery
  // on the next open: the caller needs the first error, not this one.
  if (sqlite3_get_autocommit(db_.get()) == 0) {
    sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

Result<std::optional<std::string>> SqliteStore::Get(const std::string& table,
                                                    const std::string& key) {
  if (Status status = CheckStoreTable(table); !status) return std::move(status).take_error();
  sqlite3_stmt* select = statements_.find(table)->second.get.get();
  StatementUse use(select);
  sqlite3_bind_text64(select, 1, key.data(), key.size(), SQLITE_STATIC, SQLITE_UTF8);
  int code = sqlite3_step(select);
  if (code == SQLITE_DONE) return std::optional<std::string>();
  if (code != SQLITE_ROW) return SqlError("read " + table);
  const auto* value = static_cast<const char*>(sqlite3_column_blob(select, 0));
  return std::optional<std::string>(
      std::string(value != nullptr ? value : "", sqlite3_column_bytes(select, 0)));
}

// The rows a SELECT of (key, value) steps through, until `limit`.
Result<Table> SqliteStore::ReadRows(sqlite3_stmt* select, const std::string& table, size_t limit) {
  Table rows;
  int code = SQLITE_ROW;
  while (rows.size() < limit && (code = sqlite3_step(select)) == SQLITE_ROW) {
    // column_blob is null for a zero-length value; read the size first and copy only when set.
    const auto* key = static_cast<const char*>(sqlite3_column_blob(select, 0));
    std::string key_text(key != nullptr ? key : "", sqlite3_column_bytes(select, 0));
    const auto* value = static_cast<const char*>(sqlite3_column_blob(select, 1));
    std::string value_bytes(value != nullptr ? value : "", sqlite3_column_bytes(select, 1));
    rows.emplace_back(std::move(key_text), std::move(value_bytes));
  }
  if (code != SQLITE_DONE && code != SQLITE_ROW) return SqlError("read table " + table);
  return rows;
}

Result<Table> SqliteStore::Load(const std::string& table) {
  if (Status status = CheckStoreTable(table); !status) return std::move(status).take_error();
  sqlite3_stmt* select = statements_.find(table)->second.select.get();
  StatementUse use(select);
  return ReadRows(select, table, SIZE_MAX);
}

Result<Table> SqliteStore::LoadRange(const std::string& table, const std::string& after,
                                     const std::string& before, size_t limit) {
  if (Status status = CheckStoreTable(table); !status) return std::move(status).take_error();
  auto statement = Prepare("SELECT key, value FROM " + table + " WHERE key > ?1" +
                           (before.empty() ? "" : " AND key < ?3") + " ORDER BY key LIMIT ?2");
  if (!statement) return std::move(statement).take_error();
  sqlite3_stmt* select = statement->get();
  sqlite3_bind_text64(select, 1, after.data(), after.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  sqlite3_bind_int64(select, 2, static_cast<sqlite3_int64>(std::min<size_t>(limit, INT64_MAX)));
  if (!before.empty())
    sqlite3_bind_text64(select, 3, before.data(), before.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  return ReadRows(select, table, limit);
}

}  // namespace

Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& directory) {
  if (Status status = PrepareDirectory(directory); !status) return std::move(status).take_error();
  const std::string path = directory + "/" + std::string(kDatabaseFile);
  if (Status status = PrepareDatabase(path); !status) return std::move(status).take_error();
  sqlite3* raw = nullptr;
  // NOMUTEX: a connection has one caller at a time (see Store), so SQLite's own locks are waste.
  int code =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  Database db(raw);  // Owned even on failure: SQLite allocates a handle to carry the error.
  if (code != SQLITE_OK) return OpenError(path, db.get(), code);
  auto store = std::make_unique<SqliteStore>(path, std::move(db));
  if (Status status = store->Configure(); !status) return std::move(status).take_error();
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace drover::ctld
