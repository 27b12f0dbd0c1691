// libFuzzer target for sacctmgr's changes (common/accounting_change.h): the input is commands,
// one a line ("add account physics parent=root fairshare=10"), applied in turn to a new
// database. Whatever they say, every change either applies whole or fails with a message, and
// the database stays whole: each association's parent exists, every user has an association,
// every QOS named exists, and the stored record reads back as the same database. An input
// that starts with "#load" is a sacctmgr dump file instead (FuzzLoad).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/accounting_change.h"
#include "common/accounting_dump.h"
#include "common/text.h"
#include "wire/accounting_codec.h"

namespace {

using namespace drover;

void CheckWhole(const acct::Database& database) {
  for (const acct::Association& association : database.associations) {
    if (association.account == "root" && !association.is_user()) continue;
    if (!database.Parent(association)) __builtin_trap();
    for (const std::string& qos : association.qos)
      if (!database.FindQos(qos)) __builtin_trap();
    if (!association.default_qos.empty() && !database.FindQos(association.default_qos))
      __builtin_trap();
  }
  for (const acct::User& user : database.users) {
    bool with_default = false;
    for (const acct::Association& association : database.associations)
      with_default = with_default ||
                     (association.user == user.name && association.account == user.default_account);
    if (!with_default) __builtin_trap();
  }
  for (const acct::Qos& qos : database.qos)
    for (const std::string& preempted : qos.preempt)
      if (!database.FindQos(preempted)) __builtin_trap();
  v1::AccountingDatabase record;
  wire::ToProto(database, &record);
  auto back = wire::FromProto(record);
  if (!back) __builtin_trap();
  v1::AccountingDatabase again;
  wire::ToProto(*back, &again);
  if (again.SerializeAsString() != record.SerializeAsString()) __builtin_trap();
}

// "#load" first: the rest is a sacctmgr dump file (accounting_dump.h), loaded into a new
// database; what loads must be whole, and its own dump must load back to the same file.
void FuzzLoad(std::string_view text) {
  auto file = acct::ParseDumpFile(text);
  if (!file) {
    if (file.error().empty()) __builtin_trap();
    return;
  }
  acct::Database database = acct::Database::Initial("fuzz");
  acct::LoadOptions options;
  options.add_missing_qos = text.size() % 2 == 0;
  options.clean = text.size() % 3 == 0;
  auto loaded = acct::LoadDumpFile(database, *file, options);
  if (!loaded) {
    if (loaded.error().empty()) __builtin_trap();
    return;
  }
  CheckWhole(database);
  std::string cluster = file->cluster;
  std::string dumped = acct::FormatDumpFile(database, cluster);
  auto again = acct::ParseDumpFile(dumped);
  if (!again) __builtin_trap();
  acct::Database fresh = acct::Database::Initial(cluster);
  fresh.qos = database.qos;
  fresh.users = database.users;  // the administrator levels of users the file does not name
  auto reloaded = acct::LoadDumpFile(fresh, *again, {});
  if (!reloaded) __builtin_trap();
  if (acct::FormatDumpFile(fresh, cluster) != dumped) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (text.starts_with("#load\n")) {
    FuzzLoad(text.substr(6));
    return 0;
  }
  acct::Database database = acct::Database::Initial("fuzz");
  int commands = 0;
  for (const std::string& line : Split(text, '\n')) {
    if (++commands > 64) break;
    std::vector<std::string> words;
    for (const std::string& word : Split(line, ' '))
      if (!word.empty()) words.push_back(word);
    if (words.size() < 2) continue;
    auto verb = acct::ParseVerb(words[0]);
    if (!verb) continue;
    auto entity = acct::ParseEntity(*verb, words[1]);
    if (!entity) continue;
    acct::ChangeRequest request{*verb, *entity, {words.begin() + 2, words.end()}};
    acct::Database before = database;
    auto outcome = acct::ApplyChange(database, request);
    if (!outcome) {
      if (outcome.error().empty()) __builtin_trap();  // every failure says why
      v1::AccountingDatabase a, b;
      wire::ToProto(before, &a);
      wire::ToProto(database, &b);
      if (a.SerializeAsString() != b.SerializeAsString()) __builtin_trap();  // nothing changed
    }
    CheckWhole(database);
  }
  return 0;
}
