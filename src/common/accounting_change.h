// sacctmgr's add, modify and delete applied to an accounting database: the words after the
// entity as sacctmgr takes them ("physics Parent=science Fairshare=10", "where name=bob set
// MaxJobs=4"), with Slurm 22.05's rules and messages. Nothing changes on an error.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/accounting.h"
#include "common/result.h"

namespace drover::acct {

// kLoad: sacctmgr load, the cluster file in ChangeRequest::file (accounting_dump.h), with the
// words "clean" and "Cluster=NAME".
enum class Verb { kAdd, kModify, kDelete, kLoad };
enum class Entity { kCluster, kAccount, kUser, kQos };

// sacctmgr's keywords: add/create, modify/update, delete/remove; account/acct, cluster, user,
// qos. An error for anything else, in sacctmgr's words.
Result<Verb> ParseVerb(std::string_view word);
Result<Entity> ParseEntity(Verb verb, std::string_view word);

struct ChangeRequest {
  Verb verb = Verb::kAdd;
  Entity entity = Entity::kAccount;
  std::vector<std::string> words;
  std::string file{};  // kLoad's cluster file
};

// What a change did, as sacctmgr prints it; `changed` false when nothing was new or matched
// (" Nothing new added.", " Nothing modified"), which sacctmgr exits 1 for.
struct ChangeOutcome {
  std::string text;
  bool changed = false;
  std::vector<std::string> warnings;  // settings stored but not enforced, and the like
};

// Applies `request` to `database` (on every cluster it holds when the words name none).
Result<ChangeOutcome> ApplyChange(Database& database, const ChangeRequest& request);

// One word of a request: "Key=Value", "Key+=Value", "Key-=Value", or a bare value (a name).
struct Word {
  std::string key;    // as typed; empty for a bare value
  std::string op;     // "=", "+=" or "-="; empty for a bare value
  std::string value;  // one pair of surrounding quotes removed
};
Word SplitWord(std::string_view text);

}  // namespace drover::acct
