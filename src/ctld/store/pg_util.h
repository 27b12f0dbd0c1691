// What the PostgreSQL store and the leader lease share: libpq handles that free themselves,
// messages without libpq's trailing newline, and the schema both rely on.
#pragma once

#include <libpq-fe.h>

#include <memory>
#include <string>

#include "common/text.h"

namespace drover::ctld::pg {

struct ConnectionCloser {
  void operator()(PGconn* connection) const { PQfinish(connection); }
};
struct ResultClearer {
  void operator()(PGresult* result) const { PQclear(result); }
};
using Connection = std::unique_ptr<PGconn, ConnectionCloser>;
using QueryResult = std::unique_ptr<PGresult, ResultClearer>;

// Serialises concurrent schema creation by several controllers starting at once.
constexpr long kSchemaLock = 0x64726f766572;  // "drover"

// The server's message, one line, without libpq's trailing newline.
inline std::string ErrorOf(PGconn* connection) {
  return std::string(Trim(PQerrorMessage(connection)));
}
inline std::string ErrorOf(const PGresult* result) {
  return std::string(Trim(PQresultErrorMessage(result)));
}

// A connection whose server notices ("relation ... already exists, skipping") are dropped, not
// printed on stderr as libpq does by default: every error comes back with its result.
inline PGconn* ConnectQuietly(const std::string& conninfo) {
  PGconn* connection = PQconnectdb(conninfo.c_str());
  if (connection)
    PQsetNoticeProcessor(
        connection, [](void*, const char*) {}, nullptr);
  return connection;
}

// The lease row (leader_lease.h) and the fence every leader's commit runs first: it locks the
// row for share, so a controller taking the lease waits for a commit in flight, and a commit
// after the take sees the new term and fails, rolling its whole batch back. SQL for a
// transaction that holds kSchemaLock.
inline constexpr const char* kLeaseSchema =
    " CREATE TABLE IF NOT EXISTS drover_leader (id int PRIMARY KEY CHECK (id = 1), term bigint "
    "NOT NULL, holder text NOT NULL, address text NOT NULL, instance text NOT NULL, expires "
    "timestamptz NOT NULL);"
    " INSERT INTO drover_leader VALUES (1, 0, '', '', '', '-infinity') ON CONFLICT (id) DO "
    "NOTHING;"
    " CREATE OR REPLACE FUNCTION drover_fence(t bigint) RETURNS void LANGUAGE plpgsql AS $$"
    " BEGIN PERFORM 1 FROM drover_leader WHERE id = 1 AND term = t FOR SHARE;"
    " IF NOT FOUND THEN RAISE EXCEPTION 'fenced: term % no longer leads; another controller "
    "took over', t; END IF; END $$;";

}  // namespace drover::ctld::pg
