// The PostgreSQL Store: one table per store table (key bytea primary key, value bytea), reached
// through libpq. A Commit sends every put and delete of its batch in one pipeline and one
// implicit transaction, ended by a Sync: the server answers the Sync once the transaction has
// committed (synchronous_commit, the server's default, makes that durable), so OK is returned
// only then, and an error anywhere rolls the whole batch back.

#include <fmt/format.h>
#include <libpq-fe.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "common/log.h"
#include "common/text.h"
#include "ctld/store/pg_util.h"
#include "ctld/store/store.h"

namespace drover::ctld {
namespace {

using pg::Connection;
using pg::ErrorOf;
using pg::kSchemaLock;
using pg::QueryResult;

// Statement names per table: prepared once per connection.
std::string PutName(std::string_view table) {
  return fmt::format("put_{}", table);
}
std::string DeleteName(std::string_view table) {
  return fmt::format("del_{}", table);
}
std::string GetName(std::string_view table) {
  return fmt::format("get_{}", table);
}
std::string RangeName(std::string_view table) {
  return fmt::format("range_{}", table);
}
std::string AllName(std::string_view table) {
  return fmt::format("all_{}", table);
}

class PostgresStore : public Store {
 public:
  PostgresStore(std::string conninfo, std::optional<int64_t> fence_term)
      : conninfo_(std::move(conninfo)), fence_term_(fence_term) {}

  Status Open() {
    if (Status connected = Connect(); !connected) return connected;
    return Migrate();
  }

  // A connection lost mid-batch (the server restarted) leaves the batch committed or not: it is
  // sent again once a new connection is made, which is safe because each put is an upsert and
  // each delete removes what is there, and the fence still stops a leader that lost its lease
  // meanwhile. The server is tried every half second for kReconnectFor; the controller's lease
  // (renewed on its own connection) ends a longer wait first when another controller can lead.
  Status Commit(const WriteBatch& batch) override {
    if (Status checked = CheckStoreTables(batch); !checked) return checked;
    if (batch.empty()) return OkStatus();
    const auto deadline = std::chrono::steady_clock::now() + kReconnectFor;
    bool said = false;
    while (true) {
      Status sent = SendBatch(batch);
      if (sent || (connection_ && PQstatus(connection_.get()) == CONNECTION_OK) ||
          std::chrono::steady_clock::now() >= deadline) {
        if (said && sent) log::Info("PostgreSQL store: reconnected; the batch is committed");
        return sent;
      }
      if (!said)
        log::Warning(
            "PostgreSQL store: {}; reconnecting every 0.5 s (nothing is acknowledged until the "
            "batch is committed)",
            sent.error());
      said = true;
      connection_.reset();
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }

 private:
  static constexpr auto kReconnectFor = std::chrono::minutes(10);

  Status SendBatch(const WriteBatch& batch) {
    if (Status ready = EnsureConnected(); !ready) return ready;
    PGconn* db = connection_.get();
    if (!PQenterPipelineMode(db)) return Failed("cannot start a pipeline");
    struct Leave {  // whatever happened: results left unread are read, so the mode can end
      PGconn* db;
      ~Leave() {
        for (int tries = 0; !PQexitPipelineMode(db) && tries < 1000; ++tries)
          QueryResult(PQgetResult(db));
      }
    } leave{db};
    size_t sent = 0;
    bool ok = true;
    // The leader's fence first: a term that no longer leads fails it, and the batch with it.
    const std::string term = fence_term_ ? std::to_string(*fence_term_) : "";
    if (fence_term_) {
      const char* values[1] = {term.c_str()};
      ok = PQsendQueryPrepared(db, "fence", 1, values, nullptr, nullptr, 0);
      ++sent;
    }
    for (const WriteBatch::Put& put : batch.puts) {
      const char* values[2] = {put.key.data(), put.value.data()};
      const int lengths[2] = {static_cast<int>(put.key.size()), static_cast<int>(put.value.size())};
      const int formats[2] = {1, 1};
      ok =
          ok && PQsendQueryPrepared(db, PutName(put.table).c_str(), 2, values, lengths, formats, 1);
      ++sent;
    }
    for (const WriteBatch::Delete& del : batch.deletes) {
      const char* values[1] = {del.key.data()};
      const int lengths[1] = {static_cast<int>(del.key.size())};
      const int formats[1] = {1};
      ok = ok &&
           PQsendQueryPrepared(db, DeleteName(del.table).c_str(), 1, values, lengths, formats, 1);
      ++sent;
    }
    // The Sync ends the pipeline's one implicit transaction: it commits there, or not at all.
    ok = ok && PQpipelineSync(db);
    if (!ok) return Failed("cannot send the batch");
    std::string first_error;
    for (size_t i = 0; i < sent; ++i) {
      QueryResult result(PQgetResult(db));
      if (!result) return Failed("the connection ended during the batch");
      ExecStatusType status = PQresultStatus(result.get());
      if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK && first_error.empty())
        first_error = status == PGRES_PIPELINE_ABORTED ? "aborted" : ErrorOf(result.get());
      QueryResult end(PQgetResult(db));  // each query's results end with a null
    }
    QueryResult sync(PQgetResult(db));
    if (!sync || PQresultStatus(sync.get()) != PGRES_PIPELINE_SYNC)
      return Failed("the batch's commit was not confirmed");
    if (!first_error.empty())
      return MakeError(
          fmt::format("PostgreSQL store: the batch was not committed: {}", first_error));
    return OkStatus();
  }

 public:
  Result<Table> Load(const std::string& table) override {
    if (Status checked = CheckStoreTable(table); !checked) return std::move(checked).take_error();
    return Rows(AllName(table), {});
  }

  Result<Table> LoadRange(const std::string& table, const std::string& after,
                          const std::string& before, size_t limit) override {
    if (Status checked = CheckStoreTable(table); !checked) return std::move(checked).take_error();
    if (limit == 0) return Table{};
    const std::string count = std::to_string(std::min<size_t>(limit, INT64_MAX));
    return Rows(RangeName(table), {after, before, count});
  }

  Result<std::optional<std::string>> Get(const std::string& table,
                                         const std::string& key) override {
    if (Status checked = CheckStoreTable(table); !checked) return std::move(checked).take_error();
    Result<Table> rows = Rows(GetName(table), {key});
    if (!rows) return std::move(rows).take_error();
    if (rows->empty()) return std::optional<std::string>();
    return std::optional<std::string>(std::move(rows->front().second));
  }

 private:
  Status Failed(std::string_view what) {
    return MakeError(fmt::format("PostgreSQL store: {}: {}", what, ErrorOf(connection_.get())));
  }

  Status Connect() {
    connection_.reset(pg::ConnectQuietly(conninfo_));
    if (!connection_ || PQstatus(connection_.get()) != CONNECTION_OK)
      return MakeError(fmt::format(
          "cannot connect to PostgreSQL ({}): {}; check StorageHost, StoragePort, StorageUser, "
          "StoragePassFile and StorageLoc, and that the server is running",
          Describe(), connection_ ? ErrorOf(connection_.get()) : "out of memory"));
    if (Status schema = CreateTables(); !schema) return schema;
    return Prepare();
  }

  // A connection lost since the last call (the server restarted) is made again once.
  Status EnsureConnected() {
    if (connection_ && PQstatus(connection_.get()) == CONNECTION_OK) return OkStatus();
    return Connect();
  }

  // Where the store is, for messages: host, port and database, never the password.
  std::string Describe() const {
    PGconn* db = connection_.get();
    if (!db) return "no connection";
    const char* host = PQhost(db);
    const char* port = PQport(db);
    const char* name = PQdb(db);
    return fmt::format("host {}, port {}, database {}", host ? host : "?", port ? port : "?",
                       name ? name : "?");
  }

  Status Exec(const std::string& sql) {
    QueryResult result(PQexec(connection_.get(), sql.c_str()));
    ExecStatusType status = result ? PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
      return MakeError(fmt::format("PostgreSQL store: {}: {}", sql.substr(0, 60),
                                   result ? ErrorOf(result.get()) : ErrorOf(connection_.get())));
    return OkStatus();
  }

  // Every table, created once, under a lock so that controllers starting together do not race.
  Status CreateTables() {
    std::string sql = fmt::format("BEGIN; SELECT pg_advisory_xact_lock({});", kSchemaLock);
    for (std::string_view table : kStoreTables)
      sql += fmt::format(
          " CREATE TABLE IF NOT EXISTS {} (key bytea PRIMARY KEY, value bytea NOT NULL);", table);
    sql += pg::kLeaseSchema;
    sql += " COMMIT;";
    if (Status made = Exec(sql); !made) {
      (void)Exec("ROLLBACK");
      return made;
    }
    return OkStatus();
  }

  Status Prepare() {
    if (fence_term_) {
      QueryResult result(
          PQprepare(connection_.get(), "fence", "SELECT drover_fence($1::bigint)", 0, nullptr));
      if (!result || PQresultStatus(result.get()) != PGRES_COMMAND_OK)
        return MakeError(fmt::format("PostgreSQL store: cannot prepare the fence: {}",
                                     result ? ErrorOf(result.get()) : ErrorOf(connection_.get())));
    }
    for (std::string_view table : kStoreTables) {
      const std::pair<std::string, std::string> statements[] = {
          {PutName(table),
           fmt::format("INSERT INTO {} (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE "
                       "SET value = EXCLUDED.value",
                       table)},
          {DeleteName(table), fmt::format("DELETE FROM {} WHERE key = $1", table)},
          {GetName(table), fmt::format("SELECT key, value FROM {} WHERE key = $1", table)},
          {RangeName(table),
           fmt::format("SELECT key, value FROM {} WHERE key > $1 AND ($2 = ''::bytea OR key < "
                       "$2) ORDER BY key LIMIT $3::text::bigint",
                       table)},
          {AllName(table), fmt::format("SELECT key, value FROM {} ORDER BY key", table)},
      };
      for (const auto& [name, sql] : statements) {
        QueryResult result(PQprepare(connection_.get(), name.c_str(), sql.c_str(), 0, nullptr));
        if (!result || PQresultStatus(result.get()) != PGRES_COMMAND_OK)
          return MakeError(
              fmt::format("PostgreSQL store: cannot prepare {}: {}", name,
                          result ? ErrorOf(result.get()) : ErrorOf(connection_.get())));
      }
    }
    return OkStatus();
  }

  // A prepared query's rows (key, value), every parameter and column binary; the last
  // parameter of a range (its limit) is text.
  Result<Table> Rows(const std::string& statement, const std::vector<std::string>& parameters) {
    if (Status ready = EnsureConnected(); !ready) return std::move(ready).take_error();
    std::vector<const char*> values;
    std::vector<int> lengths, formats;
    for (size_t i = 0; i < parameters.size(); ++i) {
      values.push_back(parameters[i].data());
      lengths.push_back(static_cast<int>(parameters[i].size()));
      formats.push_back(i == 2 ? 0 : 1);  // the limit, as text
    }
    std::string count;
    if (parameters.size() == 3) {
      count = parameters[2];  // text parameters are read up to their NUL
      values[2] = count.c_str();
    }
    QueryResult result(PQexecPrepared(connection_.get(), statement.c_str(),
                                      static_cast<int>(values.size()), values.data(),
                                      lengths.data(), formats.data(), 1));
    if (!result || PQresultStatus(result.get()) != PGRES_TUPLES_OK)
      return MakeError(fmt::format("PostgreSQL store: {}: {}", statement,
                                   result ? ErrorOf(result.get()) : ErrorOf(connection_.get())));
    Table rows;
    const int count_rows = PQntuples(result.get());
    rows.reserve(static_cast<size_t>(count_rows));
    for (int row = 0; row < count_rows; ++row)
      rows.emplace_back(std::string(PQgetvalue(result.get(), row, 0),
                                    static_cast<size_t>(PQgetlength(result.get(), row, 0))),
                        std::string(PQgetvalue(result.get(), row, 1),
                                    static_cast<size_t>(PQgetlength(result.get(), row, 1))));
    return rows;
  }

  // meta's schema_version, as the SQLite store keeps it: a newer database is refused.
  Status Migrate() {
    Result<std::optional<std::string>> stored = Get("meta", "schema_version");
    if (!stored) return std::move(stored).take_error();
    if (*stored) {
      std::optional<int64_t> version = ParseInt64(**stored);
      if (!version)
        return MakeError(fmt::format("PostgreSQL store ({}): unreadable schema_version '{}'",
                                     Describe(), **stored));
      if (*version > kStoreSchemaVersion)
        return MakeError(fmt::format(
            "PostgreSQL store ({}) holds schema version {}, written by a newer Drover; this "
            "droverctld reads versions up to {}: upgrade it",
            Describe(), *version, kStoreSchemaVersion));
      if (*version == kStoreSchemaVersion) return OkStatus();
    }
    // A new database, or an older layout: every version so far only added tables, made above.
    WriteBatch batch;
    batch.puts.push_back({"meta", "schema_version", std::to_string(kStoreSchemaVersion)});
    return Commit(batch);
  }

  const std::string conninfo_;
  const std::optional<int64_t> fence_term_;  // the leader's term, checked by every commit
  Connection connection_;
};

}  // namespace

namespace {
// A value of libpq's keyword = 'value' form: quoted, its backslashes and quotes escaped.
std::string Quoted(std::string_view value) {
  std::string quoted = "'";
  for (char c : value) {
    if (c == '\\' || c == '\'') quoted += '\\';
    quoted += c;
  }
  return quoted + "'";
}
}  // namespace

Result<std::string> PostgresConnInfo(const StorageSettings& storage) {
  std::string conninfo =
      fmt::format("host={} port={} user={} dbname={} connect_timeout=10", Quoted(storage.host),
                  storage.port, Quoted(storage.user), Quoted(storage.database));
  if (!storage.pass_file.empty()) {
    std::ifstream in(storage.pass_file);
    std::string password;
    if (!in || !std::getline(in, password))
      return MakeError(fmt::format(
          "StoragePassFile={}: cannot read it ({}); it holds the PostgreSQL password on its "
          "first line, readable by the user droverctld runs as",
          storage.pass_file, in ? "it is empty" : std::strerror(errno)));
    conninfo += " password=" + Quoted(Trim(password));
  }
  return conninfo;
}

Result<std::unique_ptr<Store>> OpenConfiguredStore(const StorageSettings& storage,
                                                   const std::string& state_directory,
                                                   std::optional<int64_t> fence_term) {
  if (storage.kind == StorageKind::kSqlite) return OpenSqliteStore(state_directory);
  Result<std::string> conninfo = PostgresConnInfo(storage);
  if (!conninfo) return std::move(conninfo).take_error();
  return OpenPostgresStore(*conninfo, fence_term);
}

Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string& conninfo,
                                                 std::optional<int64_t> fence_term) {
  auto store = std::make_unique<PostgresStore>(conninfo, fence_term);
  if (Status opened = store->Open(); !opened) return std::move(opened).take_error();
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace drover::ctld
