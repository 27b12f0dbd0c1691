// Tests of the Store contract, run against SQLite and MemoryStore alike, plus each one's own
// duties: SQLite's survival of reopen and kill -9, MemoryStore's injected failures and crashes.
// A test here must never pass against a store that loses or half-applies a committed batch.

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <sqlite3.h>

#include "common/process_file.h"
#include "ctld/store/leader_lease.h"
#include "ctld/store/store.h"
#include "testing/postgres_server.h"

namespace drover::ctld {
namespace {

using Row = std::pair<std::string, std::string>;

// A fresh folder under the test temp dir, removed with everything in it at scope exit.
class TempDirectory {
 public:
  TempDirectory() {
    std::string pattern = ::testing::TempDir() + "drover-store-XXXXXX";
    path_ = mkdtemp(pattern.data());
  }
  ~TempDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Plain GoogleTest has no substring matcher (gmock is not a dependency); this prints both texts.
::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' lacks '" << part << "'";
}

WriteBatch Puts(std::vector<WriteBatch::Put> puts) {
  WriteBatch batch;
  batch.puts = std::move(puts);
  return batch;
}

WriteBatch Deletes(std::vector<WriteBatch::Delete> deletes) {
  WriteBatch batch;
  batch.deletes = std::move(deletes);
  return batch;
}

Table MustLoad(Store& store, const std::string& table) {
  Result<Table> rows = store.Load(table);
  EXPECT_TRUE(rows.ok()) << rows.error();
  return rows.ok() ? *rows : Table{};
}

std::unique_ptr<Store> MustOpenSqlite(const std::string& directory) {
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(directory);
  EXPECT_TRUE(store.ok()) << store.error();
  return store.ok() ? std::move(*store) : nullptr;
}

enum class StoreKind { kSqlite, kMemory, kPostgres };

// One PostgreSQL server for this test process (started at the first test that needs it), or
// why there is none.
drover::testing::PostgresServer* SharedPostgres(std::string& why) {
  static Result<std::unique_ptr<drover::testing::PostgresServer>> server =
      drover::testing::PostgresServer::Start();
  if (!server) {
    why = server.error();
    return nullptr;
  }
  return server->get();
}

// The server's test database, emptied: every table dropped.
::testing::AssertionResult EmptyDatabase(const std::string& conninfo) {
  PGconn* db = PQconnectdb(conninfo.c_str());
  PGresult* result = PQexec(
      db,
      "DROP SCHEMA public CASCADE; CREATE SCHEMA public; GRANT ALL ON SCHEMA public TO public;");
  bool ok = PQresultStatus(result) == PGRES_COMMAND_OK;
  std::string error = PQerrorMessage(db);
  PQclear(result);
  PQfinish(db);
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << error;
}

// The contract every Store keeps, whichever implementation.
class StoreContractTest : public ::testing::TestWithParam<StoreKind> {
 protected:
  void SetUp() override {
    if (GetParam() == StoreKind::kMemory) {
      store_ = std::make_unique<MemoryStore>();
    } else if (GetParam() == StoreKind::kPostgres) {
      std::string why;
      drover::testing::PostgresServer* server = SharedPostgres(why);
      if (!server) GTEST_SKIP() << why;
      ASSERT_TRUE(EmptyDatabase(server->conninfo()));
      auto store = OpenPostgresStore(server->conninfo());
      ASSERT_TRUE(store.ok()) << store.error();
      store_ = std::move(*store);
    } else {
      store_ = MustOpenSqlite(directory_.path());
      ASSERT_NE(store_, nullptr);
    }
  }

  void MustCommit(const WriteBatch& batch) {
    Status status = store_->Commit(batch);
    ASSERT_TRUE(status.ok()) << status.error();
  }

  TempDirectory directory_;
  std::unique_ptr<Store> store_;
};

TEST_P(StoreContractTest, LoadsCommittedRowsSortedByKey) {
  MustCommit(Puts({{"jobs", "3", "c"}, {"jobs", "1", "a"}, {"nodes", "gpu01", "idle"}}));
  MustCommit(Puts({{"jobs", "2", "b"}}));
  EXPECT_EQ(MustLoad(*store_, "jobs"), (Table{{"1", "a"}, {"2", "b"}, {"3", "c"}}));
  EXPECT_EQ(MustLoad(*store_, "nodes"), (Table{{"gpu01", "idle"}}));
  EXPECT_EQ(MustLoad(*store_, "reservations"), Table{});
}

// Paging: each page starts after the last key of the one before, and the pages together are the
// whole table, in key order.
TEST_P(StoreContractTest, LoadPageWalksTheTableInKeyOrder) {
  std::vector<WriteBatch::Put> puts;
  for (int i = 0; i < 25; ++i) {
    char key[8];
    std::snprintf(key, sizeof(key), "%05d", i);
    puts.push_back({"job_history", key, "v"});
  }
  MustCommit(Puts(puts));
  Table all;
  std::string after;
  int pages = 0;
  while (true) {
    Result<Table> page = store_->LoadPage("job_history", after, 10);
    ASSERT_TRUE(page.ok()) << page.error();
    if (page->empty()) break;
    EXPECT_LE(page->size(), 10u);
    ++pages;
    after = page->back().first;
    all.insert(all.end(), page->begin(), page->end());
  }
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(all, MustLoad(*store_, "job_history"));
  EXPECT_EQ(store_->LoadPage("job_history", "00023", 10)->size(), 1u);
  EXPECT_FALSE(store_->LoadPage("qos", "", 10).ok());
}

// A range ends before its bound: one prefix of an index is read, not the keys after it.
TEST_P(StoreContractTest, LoadRangeStopsBeforeItsBound) {
  MustCommit(Puts({{"history_index", "a/1/x", ""},
                   {"history_index", "a/2/x", ""},
                   {"history_index", "a/2/y", ""},
                   {"history_index", "a/3/x", ""}}));
  auto keys = [&](const std::string& after, const std::string& before, size_t limit) {
    std::vector<std::string> found;
    Result<Table> rows = store_->LoadRange("history_index", after, before, limit);
    EXPECT_TRUE(rows.ok()) << rows.error();
    if (rows.ok())
      for (const auto& row : *rows) found.push_back(row.first);
    return found;
  };
  EXPECT_EQ(keys("a/2/", "a/20", 10), (std::vector<std::string>{"a/2/x", "a/2/y"}));
  EXPECT_EQ(keys("a/2/x", "a/20", 10), std::vector<std::string>{"a/2/y"});
  EXPECT_EQ(keys("a/2/", "a/20", 1), std::vector<std::string>{"a/2/x"});
  EXPECT_EQ(keys("a/2/", "", 10), (std::vector<std::string>{"a/2/x", "a/2/y", "a/3/x"}));
  EXPECT_EQ(keys("a/4/", "a/40", 10), std::vector<std::string>{});
  EXPECT_FALSE(store_->LoadRange("qos", "", "z", 10).ok());
}

TEST_P(StoreContractTest, KeepsValuesByteForByte) {
  const std::string binary("\0\x01\xff record", 10);
  MustCommit(Puts({{"scripts", "7", binary}, {"scripts", "8", ""}}));
  EXPECT_EQ(MustLoad(*store_, "scripts"), (Table{{"7", binary}, {"8", ""}}));
}

TEST_P(StoreContractTest, GetReadsOneRow) {
  const std::string binary("\0\x01\xff", 3);
  MustCommit(Puts({{"scripts", "7", binary}}));
  auto found = store_->Get("scripts", "7");
  ASSERT_TRUE(found.ok()) << found.error();
  EXPECT_EQ(*found, std::optional<std::string>(binary));
  auto missing = store_->Get("scripts", "8");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
  EXPECT_FALSE(store_->Get("qos", "x").ok());
}

TEST_P(StoreContractTest, PutReplacesTheValue) {
  MustCommit(Puts({{"usage", "ml\nbob", "100"}}));
  MustCommit(Puts({{"usage", "ml\nbob", "101"}}));
  EXPECT_EQ(MustLoad(*store_, "usage"), (Table{{"ml\nbob", "101"}}));
}

TEST_P(StoreContractTest, DeletesRemoveRowsAndIgnoreMissingKeys) {
  MustCommit(Puts({{"jobs", "1", "a"}, {"jobs", "2", "b"}}));
  MustCommit(Deletes({{"jobs", "1"}, {"jobs", "404"}}));
  EXPECT_EQ(MustLoad(*store_, "jobs"), (Table{{"2", "b"}}));
}

TEST_P(StoreContractTest, DeletesApplyAfterPutsOfTheSameBatch) {
  // A job submitted and finished within one engine batch must not reappear on restart.
  WriteBatch batch = Puts({{"jobs", "5", "pending"}, {"job_history", "5", "completed"}});
  batch.deletes = {{"jobs", "5"}};
  MustCommit(batch);
  EXPECT_EQ(MustLoad(*store_, "jobs"), Table{});
  EXPECT_EQ(MustLoad(*store_, "job_history"), (Table{{"5", "completed"}}));
}

TEST_P(StoreContractTest, BatchWithUnknownTableAppliesNothing) {
  MustCommit(Puts({{"jobs", "1", "a"}}));
  WriteBatch batch = Puts({{"jobs", "2", "b"}, {"no_such_table", "gpu", "up"}});
  batch.deletes = {{"jobs", "1"}};
  Status status = store_->Commit(batch);
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(Contains(status.error(), "'no_such_table'"));
  EXPECT_EQ(MustLoad(*store_, "jobs"), (Table{{"1", "a"}}));
}

TEST_P(StoreContractTest, DeleteFromUnknownTableAppliesNothing) {
  WriteBatch batch = Puts({{"jobs", "2", "b"}});
  batch.deletes = {{"accounts", "root"}};
  Status status = store_->Commit(batch);
  ASSERT_FALSE(status.ok());
  EXPECT_TRUE(Contains(status.error(), "'accounts'"));
  EXPECT_EQ(MustLoad(*store_, "jobs"), Table{});
}

TEST_P(StoreContractTest, LoadOfUnknownTableNamesIt) {
  Result<Table> rows = store_->Load("qos");
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(
      rows.error(),
      "unknown store table 'qos' (tables: jobs, job_history, scripts, environments, nodes, usage, "
      "reservations, meta, partitions, accounting, history_index)");
}

TEST_P(StoreContractTest, EmptyBatchCommits) {
  MustCommit(WriteBatch{});
  EXPECT_EQ(MustLoad(*store_, "jobs"), Table{});
}

TEST_P(StoreContractTest, KeepsAThousandBatchesOfTenPuts) {
  for (int batch_number = 0; batch_number < 1000; ++batch_number) {
    WriteBatch batch;
    for (int put = 0; put < 10; ++put) {
      char key[16];
      std::snprintf(key, sizeof key, "%05d", batch_number * 10 + put);
      batch.puts.push_back({"usage", key, "value " + std::string(key)});
    }
    MustCommit(batch);
  }
  Table rows = MustLoad(*store_, "usage");
  ASSERT_EQ(rows.size(), 10'000u);
  EXPECT_EQ(rows.front(), (Row{"00000", "value 00000"}));
  EXPECT_EQ(rows.back(), (Row{"09999", "value 09999"}));
}

INSTANTIATE_TEST_SUITE_P(Stores, StoreContractTest,
                         ::testing::Values(StoreKind::kSqlite, StoreKind::kMemory,
                                           StoreKind::kPostgres),
                         [](const ::testing::TestParamInfo<StoreKind>& param_info) {
                           return param_info.param == StoreKind::kSqlite   ? "Sqlite"
                                  : param_info.param == StoreKind::kMemory ? "Memory"
                                                                           : "Postgres";
                         });

// One SQL statement on the test database; its error, or empty.
std::string Sql(const std::string& conninfo, const std::string& sql) {
  PGconn* db = PQconnectdb(conninfo.c_str());
  PGresult* result = PQexec(db, sql.c_str());
  ExecStatusType status = PQresultStatus(result);
  std::string error =
      status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK ? "" : PQerrorMessage(db);
  PQclear(result);
  PQfinish(db);
  return error;
}

// Two controllers on one database: one leads at a time, a paused leader that lost its lease
// cannot commit one more row, and a released lease or a crashed holder on this host is taken at
// once. One test, one server: the steps build on each other.
TEST(LeaderLeaseTest, OneLeaderAtATimeAndAFencedOneCannotWrite) {
  std::string why;
  drover::testing::PostgresServer* server = SharedPostgres(why);
  if (!server) GTEST_SKIP() << why;
  ASSERT_TRUE(EmptyDatabase(server->conninfo()));
  using std::chrono::milliseconds;
  auto first = OpenLeaderLease(server->conninfo(), "ctl1", "127.0.0.1:7001", milliseconds(500));
  auto second = OpenLeaderLease(server->conninfo(), "ctl2", "127.0.0.1:7002", milliseconds(500));
  ASSERT_TRUE(first.ok()) << first.error();
  ASSERT_TRUE(second.ok()) << second.error();
  LeaderLease& one = **first;
  LeaderLease& two = **second;

  auto term1 = one.TryAcquire();
  ASSERT_TRUE(term1.ok() && *term1) << (term1.ok() ? "not taken" : term1.error());
  auto refused = two.TryAcquire();
  ASSERT_TRUE(refused.ok()) << refused.error();
  EXPECT_FALSE(*refused) << "two leaders at once";
  auto state = two.Read();
  ASSERT_TRUE(state.ok()) << state.error();
  EXPECT_EQ(state->holder, "ctl1");
  EXPECT_EQ(state->address, "127.0.0.1:7001");
  EXPECT_EQ(state->term, **term1);
  EXPECT_FALSE(state->expired);
  auto renewed = one.Renew(**term1);
  ASSERT_TRUE(renewed.ok() && *renewed);

  auto fenced = OpenPostgresStore(server->conninfo(), **term1);
  ASSERT_TRUE(fenced.ok()) << fenced.error();
  ASSERT_TRUE((*fenced)->Commit(Puts({{"jobs", "1", "first leader"}})).ok());

  // The first leader pauses past its lease; the second takes over under the next term.
  std::this_thread::sleep_for(milliseconds(600));
  auto term2 = two.TryAcquire();
  ASSERT_TRUE(term2.ok() && *term2) << (term2.ok() ? "not taken" : term2.error());
  EXPECT_EQ(**term2, **term1 + 1);
  // The paused leader resumes: its write fails, applying nothing, and it learns it lost.
  Status late = (*fenced)->Commit(Puts({{"jobs", "1", "stale"}, {"jobs", "2", "stale"}}));
  ASSERT_FALSE(late.ok());
  EXPECT_NE(late.error().find("fenced"), std::string::npos) << late.error();
  auto lost = one.Renew(**term1);
  ASSERT_TRUE(lost.ok());
  EXPECT_FALSE(*lost);
  auto current = OpenPostgresStore(server->conninfo(), **term2);
  ASSERT_TRUE(current.ok()) << current.error();
  EXPECT_EQ(MustLoad(**current, "jobs"), (Table{{"1", "first leader"}}));
  ASSERT_TRUE((*current)->Commit(Puts({{"jobs", "2", "second leader"}})).ok());

  // Released on a clean stop: taken at once.
  ASSERT_TRUE(two.Release(**term2).ok());
  auto term3 = one.TryAcquire();
  ASSERT_TRUE(term3.ok() && *term3) << (term3.ok() ? "not taken" : term3.error());
  EXPECT_EQ(**term3, **term2 + 1);

  // Held for an hour by a process of this host that has died (a controller killed here): taken
  // at once. Held by a live one, or by one of another host, it waits for the lease to run out.
  pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  ASSERT_GT(child, 0);
  const std::string boot = ThisInstance().substr(0, ThisInstance().find('/'));
  const std::string instance =
      fmt::format("{}/{}/{}", boot, child, ProcessStartTime(child).value_or(0));
  auto hold = [&](const std::string& holder_instance) {
    return Sql(server->conninfo(),
               fmt::format("UPDATE drover_leader SET term = term + 1, holder = 'ctl9', instance = "
                           "'{}', expires = clock_timestamp() + interval '1 hour'",
                           holder_instance));
  };
  ASSERT_EQ(hold(instance), "");
  auto alive = two.TryAcquire();
  ASSERT_TRUE(alive.ok());
  EXPECT_FALSE(*alive) << "taken from a live holder";
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  auto dead = two.TryAcquire();
  ASSERT_TRUE(dead.ok() && *dead) << (dead.ok() ? "not taken from a dead holder" : dead.error());
  ASSERT_EQ(hold("another-boot/1/1"), "");
  auto elsewhere = one.TryAcquire();
  ASSERT_TRUE(elsewhere.ok());
  EXPECT_FALSE(*elsewhere) << "taken from a holder on another host";
}

TEST(SqliteStoreTest, ReopenFindsEverythingCommitted) {
  TempDirectory directory;
  {
    std::unique_ptr<Store> store = MustOpenSqlite(directory.path());
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Commit(Puts({{"jobs", "1", "a"}, {"jobs", "2", "b"}})).ok());
    ASSERT_TRUE(store->Commit(Deletes({{"jobs", "1"}})).ok());
    ASSERT_TRUE(store->Commit(Puts({{"reservations", "maint", "r"}})).ok());
  }
  EXPECT_TRUE(std::filesystem::exists(directory.path() + "/drover.db"));
  std::unique_ptr<Store> reopened = MustOpenSqlite(directory.path());
  ASSERT_NE(reopened, nullptr);
  EXPECT_EQ(MustLoad(*reopened, "jobs"), (Table{{"2", "b"}}));
  EXPECT_EQ(MustLoad(*reopened, "reservations"), (Table{{"maint", "r"}}));
}

TEST(SqliteStoreTest, CreatesMissingFolders) {
  TempDirectory directory;
  const std::string nested = directory.path() + "/spool/drover";
  ASSERT_NE(MustOpenSqlite(nested), nullptr);
  EXPECT_TRUE(std::filesystem::exists(nested + "/drover.db"));
}

mode_t ModeOf(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

// The state holds every job's script and environment: the controller's user alone reads it.
TEST(SqliteStoreTest, StateIsPrivateToTheControllersUser) {
  TempDirectory directory;
  const std::string state = directory.path() + "/state";
  std::unique_ptr<Store> store = MustOpenSqlite(state);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Commit(Puts({{"jobs", "1", "script"}})).ok());
  EXPECT_EQ(ModeOf(state), 0700u);
  for (const char* file : {"/drover.db", "/drover.db-wal", "/drover.db-shm"})
    EXPECT_EQ(ModeOf(state + file), 0600u) << file;
  store.reset();

  // A state left readable by an older version, or made by hand, is made private on open.
  ASSERT_EQ(::chmod(state.c_str(), 0755), 0);
  ASSERT_EQ(::chmod((state + "/drover.db").c_str(), 0644), 0);
  ASSERT_NE(MustOpenSqlite(state), nullptr);
  EXPECT_EQ(ModeOf(state), 0700u);
  EXPECT_EQ(ModeOf(state + "/drover.db"), 0600u);
}

TEST(SqliteStoreTest, FolderUnderAFileNamesPathAndRemedy) {
  TempDirectory directory;
  const std::string file = directory.path() + "/plain-file";
  std::ofstream(file) << "not a folder";
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(file + "/state");
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error(),
            "cannot create " + file +
                "/state: Not a directory; set StateSaveLocation to a writable folder");
}

TEST(SqliteStoreTest, UnwritableFolderNamesPathAndRemedy) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes through permission bits";
  TempDirectory directory;
  const std::string locked = directory.path() + "/locked";
  ASSERT_EQ(mkdir(locked.c_str(), 0500), 0);
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(locked);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error(), "cannot write to " + locked +
                               ": Permission denied; set StateSaveLocation to a writable folder");
}

TEST(SqliteStoreTest, ForeignFileIsRefusedWithAdvice) {
  TempDirectory directory;
  std::ofstream(directory.path() + "/drover.db") << std::string(4096, 'x');
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(directory.path());
  ASSERT_FALSE(store.ok());
  EXPECT_TRUE(Contains(store.error(), directory.path() + "/drover.db"));
  EXPECT_TRUE(Contains(store.error(), "not a Drover store or it is damaged"));
}

// A database as the first layout wrote it (no accounting table, no schema version), made with
// SQLite itself: the store opens it, keeps its rows and brings it to the current version.
TEST(SqliteStoreTest, OpensAndMigratesADatabaseOfTheFirstSchema) {
  TempDirectory directory;
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((directory.path() + "/drover.db").c_str(), &db), SQLITE_OK);
    const char* first_schema[] = {"jobs",  "job_history",  "scripts", "environments", "nodes",
                                  "usage", "reservations", "meta",    "partitions"};
    for (const char* table : first_schema) {
      std::string create = std::string("CREATE TABLE ") + table +
                           "(key TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID";
      ASSERT_EQ(sqlite3_exec(db, create.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    }
    ASSERT_EQ(sqlite3_exec(db,
                           "INSERT INTO jobs VALUES('00000000000000000007', x'0a01');"
                           "INSERT INTO meta VALUES('next_job_id', '8');"
                           "INSERT INTO usage VALUES('physics\nbob', '12.500000');",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  std::unique_ptr<Store> store = MustOpenSqlite(directory.path());
  auto jobs = store->Load("jobs");
  ASSERT_TRUE(jobs.ok()) << jobs.error();
  ASSERT_EQ(jobs->size(), 1u);
  auto usage = store->Get("usage", "physics\nbob");
  ASSERT_TRUE(usage.ok() && *usage);
  EXPECT_EQ(**usage, "12.500000");
  auto accounting = store->Load("accounting");
  ASSERT_TRUE(accounting.ok()) << accounting.error();
  EXPECT_TRUE(accounting->empty());
  auto version = store->Get("meta", "schema_version");
  ASSERT_TRUE(version.ok() && *version);
  EXPECT_EQ(**version, std::to_string(kStoreSchemaVersion));
}

TEST(SqliteStoreTest, ANewerSchemaIsRefusedWithAdvice) {
  TempDirectory directory;
  {
    std::unique_ptr<Store> store = MustOpenSqlite(directory.path());
    WriteBatch batch;
    batch.puts.push_back({"meta", "schema_version", std::to_string(kStoreSchemaVersion + 1)});
    ASSERT_TRUE(store->Commit(batch).ok());
  }
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(directory.path());
  ASSERT_FALSE(store.ok());
  EXPECT_TRUE(Contains(store.error(), "written by a newer Drover"));
}

// A child process commits batch after batch, reporting each number on a pipe once Commit has
// returned OK, and the parent SIGKILLs it. Each batch writes this many keys, so a partial batch
// would show.
constexpr int kKeysPerBatch = 5;
constexpr uint32_t kNeverPause = 0;
// The parent lets the child run on this long after the kill point, so a kill mid-stream lands at
// no particular point of the child's loop.
constexpr useconds_t kRunOnBeforeKillMicroseconds = 5000;

struct CrashRun {
  uint32_t kill_after_report;   // The parent kills the child once this batch was reported.
  uint32_t pause_after_report;  // The child stops after reporting it (kNeverPause: it runs on).
};

std::string CrashKey(uint32_t batch, int key) {
  char text[32];
  std::snprintf(text, sizeof text, "b%07u-k%d", batch, key);
  return text;
}

[[noreturn]] void CommitUntilKilled(const std::string& directory, int report_fd,
                                    uint32_t pause_after_report) {
  Result<std::unique_ptr<Store>> store = OpenSqliteStore(directory);
  if (!store.ok()) _exit(2);
  for (uint32_t batch_number = 1; batch_number < 1'000'000; ++batch_number) {
    WriteBatch batch;
    for (int key = 0; key < kKeysPerBatch; ++key) {
      batch.puts.push_back({"jobs", CrashKey(batch_number, key), std::string(200, 'j')});
    }
    if (!(*store)->Commit(batch).ok()) _exit(3);
    if (write(report_fd, &batch_number, sizeof batch_number) != sizeof batch_number) _exit(4);
    while (batch_number == pause_after_report) pause();
  }
  _exit(0);
}

// Reads the child's reports; kills it once enough came, then drains what it sent before dying.
uint32_t KillAfterReports(pid_t child, int report_fd, uint32_t kill_after_report) {
  uint32_t last_reported = 0;
  uint32_t number = 0;
  bool killed = false;
  // Pipe writes of 4 bytes are atomic, so every read that returns 4 bytes is one report.
  while (read(report_fd, &number, sizeof number) == sizeof number) {
    last_reported = number;
    if (!killed && last_reported >= kill_after_report) {
      usleep(kRunOnBeforeKillMicroseconds);
      kill(child, SIGKILL);
      killed = true;
    }
  }
  return last_reported;
}

// Runs a child to its death by SIGKILL and returns the last batch it reported.
uint32_t RunAndKill(const std::string& directory, CrashRun run) {
  int fds[2];
  if (pipe(fds) != 0) return 0;
  pid_t child = fork();
  if (child < 0) return 0;
  if (child == 0) {
    close(fds[0]);
    CommitUntilKilled(directory, fds[1], run.pause_after_report);
  }
  close(fds[1]);
  uint32_t last_reported = KillAfterReports(child, fds[0], run.kill_after_report);
  close(fds[0]);
  int wait_status = 0;
  EXPECT_EQ(waitpid(child, &wait_status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGKILL)
      << "the child exited by itself, status " << WEXITSTATUS(wait_status);
  return last_reported;
}

// Every reported batch is whole; the one in flight at the kill is whole or absent; none follow.
void ExpectReportedBatchesWhole(const std::string& directory, uint32_t last_reported) {
  std::unique_ptr<Store> store = MustOpenSqlite(directory);
  ASSERT_NE(store, nullptr);
  std::map<uint32_t, int> keys_per_batch;
  for (const auto& [key, value] : MustLoad(*store, "jobs")) {
    ++keys_per_batch[static_cast<uint32_t>(std::stoul(key.substr(1, 7)))];
  }
  for (uint32_t batch = 1; batch <= last_reported; ++batch) {
    EXPECT_EQ(keys_per_batch[batch], kKeysPerBatch) << "reported batch " << batch;
  }
  for (const auto& [batch, count] : keys_per_batch) {
    EXPECT_LE(batch, last_reported + 1);
    EXPECT_TRUE(count == 0 || count == kKeysPerBatch) << "batch " << batch << ": " << count;
  }
}

TEST(SqliteStoreTest, EveryReportedCommitSurvivesKill9MidStream) {
  TempDirectory directory;
  uint32_t last_reported =
      RunAndKill(directory.path(), {.kill_after_report = 200, .pause_after_report = kNeverPause});
  ASSERT_GE(last_reported, 200u);
  ExpectReportedBatchesWhole(directory.path(), last_reported);
}

TEST(SqliteStoreTest, CommitIsDurableTheMomentItReturns) {
  // A kill mid-stream nearly always lands in an fsync, where a store that defers its COMMIT to a
  // later call would hide; this child stops right after a report, so nothing later can save it.
  // 37 is no round number, so deferring to every 10th or 50th batch shows.
  TempDirectory directory;
  constexpr uint32_t kLastBatch = 37;
  uint32_t last_reported = RunAndKill(
      directory.path(), {.kill_after_report = kLastBatch, .pause_after_report = kLastBatch});
  ASSERT_EQ(last_reported, kLastBatch);
  ExpectReportedBatchesWhole(directory.path(), last_reported);
}

TEST(MemoryStoreTest, FailedCommitsApplyNothing) {
  MemoryStore store;
  store.FailNextCommits(2);
  EXPECT_FALSE(store.Commit(Puts({{"jobs", "1", "a"}})).ok());
  EXPECT_FALSE(store.Commit(Puts({{"jobs", "2", "b"}})).ok());
  EXPECT_TRUE(store.Commit(Puts({{"jobs", "3", "c"}})).ok());
  EXPECT_EQ(MustLoad(store, "jobs"), (Table{{"3", "c"}}));
  EXPECT_EQ(store.committed().size(), 1u);
}

TEST(MemoryStoreTest, CrashAfterKeepsOnlyTheFirstBatches) {
  MemoryStore store;
  store.CrashAfter(2);
  for (const char* key : {"1", "2", "3", "4"}) {
    // The writer cannot tell: each Commit still says OK, as fsync-less writes would.
    EXPECT_TRUE(store.Commit(Puts({{"jobs", key, "x"}})).ok());
  }
  EXPECT_EQ(MustLoad(store, "jobs"), (Table{{"1", "x"}, {"2", "x"}}));
  EXPECT_EQ(store.committed().size(), 2u);
}

}  // namespace
}  // namespace drover::ctld
