// See leader_lease.h. Every change of the row is a compare-and-set on its term, so two
// controllers that look at once cannot both take it.
#include "ctld/store/leader_lease.h"

#include <fmt/format.h>
#include <libpq-fe.h>
#include <unistd.h>

#include <fstream>
#include <string_view>
#include <utility>
#include <vector>

#include "common/process_file.h"
#include "common/text.h"
#include "ctld/store/pg_util.h"

namespace drover::ctld {
namespace {

using pg::Connection;
using pg::ErrorOf;
using pg::QueryResult;

// A lease's instance after scontrol takeover: "handover:NAME".
constexpr std::string_view kHandover = "handover:";

std::string BootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return std::string(Trim(id));
}

// Whether `instance` is a process of this boot of this host that no longer runs.
bool DeadHereAndNow(const std::string& instance) {
  std::vector<std::string> parts = Split(instance, '/');
  if (parts.size() != 3 || parts[0].empty() || parts[0] != BootId()) return false;
  std::optional<int64_t> pid = ParseInt64(parts[1]);
  std::optional<int64_t> started = ParseInt64(parts[2]);
  if (!pid || !started || *pid <= 0) return false;
  return !ProcessAlive(ProcessRecord{static_cast<pid_t>(*pid), static_cast<uint64_t>(*started)});
}

class PostgresLease : public LeaderLease {
 public:
  PostgresLease(std::string conninfo, std::string name, std::string address,
                std::chrono::milliseconds lease)
      : conninfo_(std::move(conninfo)),
        name_(std::move(name)),
        address_(std::move(address)),
        lease_(fmt::format("{} milliseconds", lease.count())),
        instance_(ThisInstance()) {}

  Status Open() {
    if (Status connected = Connect(); !connected) return connected;
    return OkStatus();
  }

  Result<std::optional<int64_t>> TryAcquire() override {
    Result<LeaseState> now = Read();
    if (!now) return std::move(now).take_error();
    if (!now->expired && !now->holder.empty() && !DeadHereAndNow(now->instance))
      return std::optional<int64_t>();
    // Handed to another by scontrol takeover: that one's alone for a lease.
    if (now->instance.starts_with(kHandover) && now->instance.substr(kHandover.size()) != name_ &&
        now->recent)
      return std::optional<int64_t>();
    // Only if nobody changed it since it was read: of two standbys, one wins.
    Result<std::vector<std::string>> taken = Query(
        "UPDATE drover_leader SET term = term + 1, holder = $1, address = $2, instance = $3, "
        "expires = clock_timestamp() + $4::interval WHERE id = 1 AND term = $5::bigint "
        "RETURNING term",
        {name_, address_, instance_, lease_, std::to_string(now->term)});
    if (!taken) return std::move(taken).take_error();
    if (taken->empty()) return std::optional<int64_t>();
    std::optional<int64_t> term = ParseInt64((*taken)[0]);
    if (!term) return MakeError("the leader lease's new term is not a number: " + (*taken)[0]);
    return term;
  }

  Result<bool> Renew(int64_t term) override {
    Result<std::vector<std::string>> renewed = Query(
        "UPDATE drover_leader SET expires = clock_timestamp() + $1::interval WHERE id = 1 "
        "AND term = $2::bigint RETURNING term",
        {lease_, std::to_string(term)});
    if (!renewed) return std::move(renewed).take_error();
    return !renewed->empty();
  }

  Status Release(int64_t term, const std::string& to) override {
    Result<std::vector<std::string>> released =
        to.empty()
            ? Query(
                  "UPDATE drover_leader SET holder = '', expires = '-infinity' WHERE id = 1 AND "
                  "term = $1::bigint RETURNING term",
                  {std::to_string(term)})
            : Query(
                  "UPDATE drover_leader SET holder = '', instance = $2, expires = "
                  "clock_timestamp() WHERE id = 1 AND term = $1::bigint RETURNING term",
                  {std::to_string(term), std::string(kHandover) + to});
    if (!released) return std::move(released).take_error();
    return OkStatus();
  }

  Result<LeaseState> Read() override {
    Result<std::vector<std::string>> row = Query(
        "SELECT term, holder, address, instance, expires < clock_timestamp(), expires > "
        "clock_timestamp() - $1::interval FROM drover_leader WHERE id = 1",
        {lease_});
    if (!row) return std::move(row).take_error();
    if (row->size() != 6) return MakeError("the leader lease's row is missing");
    LeaseState state;
    state.term = ParseInt64((*row)[0]).value_or(0);
    state.holder = (*row)[1];
    state.address = (*row)[2];
    state.instance = (*row)[3];
    state.expired = (*row)[4] == "t";
    state.recent = (*row)[5] == "t";
    return state;
  }

 private:
  Status Connect() {
    connection_.reset(pg::ConnectQuietly(conninfo_));
    if (!connection_ || PQstatus(connection_.get()) != CONNECTION_OK)
      return MakeError(fmt::format(
          "the leader lease: cannot connect to PostgreSQL: {}; check StorageHost, StoragePort, "
          "StorageUser, StoragePassFile and StorageLoc, and that the server is running",
          connection_ ? ErrorOf(connection_.get()) : "out of memory"));
    std::string sql = fmt::format("BEGIN; SELECT pg_advisory_xact_lock({});{} COMMIT;",
                                  pg::kSchemaLock, pg::kLeaseSchema);
    QueryResult made(PQexec(connection_.get(), sql.c_str()));
    if (!made || PQresultStatus(made.get()) != PGRES_COMMAND_OK) {
      std::string why = made ? ErrorOf(made.get()) : ErrorOf(connection_.get());
      connection_.reset();
      return MakeError("the leader lease: cannot create its table: " + why);
    }
    return OkStatus();
  }

  // The first row's columns as text; empty when there is none. A lost connection is made again
  // once per call (the server restarted).
  Result<std::vector<std::string>> Query(const char* sql, const std::vector<std::string>& params) {
    if (!connection_ || PQstatus(connection_.get()) != CONNECTION_OK)
      if (Status connected = Connect(); !connected) return std::move(connected).take_error();
    std::vector<const char*> values;
    for (const std::string& param : params) values.push_back(param.c_str());
    QueryResult result(PQexecParams(connection_.get(), sql, static_cast<int>(values.size()),
                                    nullptr, values.data(), nullptr, nullptr, 0));
    if (!result || PQresultStatus(result.get()) != PGRES_TUPLES_OK) {
      std::string why = result ? ErrorOf(result.get()) : ErrorOf(connection_.get());
      if (PQstatus(connection_.get()) != CONNECTION_OK) connection_.reset();
      return MakeError("the leader lease: " + why);
    }
    std::vector<std::string> row;
    if (PQntuples(result.get()) > 0)
      for (int column = 0; column < PQnfields(result.get()); ++column)
        row.emplace_back(PQgetvalue(result.get(), 0, column),
                         static_cast<size_t>(PQgetlength(result.get(), 0, column)));
    return row;
  }

  const std::string conninfo_, name_, address_, lease_, instance_;
  Connection connection_;
};

}  // namespace

std::string ThisInstance() {
  const pid_t pid = ::getpid();
  return fmt::format("{}/{}/{}", BootId(), pid, ProcessStartTime(pid).value_or(0));
}

Result<std::unique_ptr<LeaderLease>> OpenLeaderLease(const std::string& conninfo,
                                                     const std::string& name,
                                                     const std::string& address,
                                                     std::chrono::milliseconds lease) {
  auto opened = std::make_unique<PostgresLease>(conninfo, name, address, lease);
  if (Status ok = opened->Open(); !ok) return std::move(ok).take_error();
  return std::unique_ptr<LeaderLease>(std::move(opened));
}

}  // namespace drover::ctld
