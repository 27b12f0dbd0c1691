// MemoryStore: the Store that tests inject, with failures and crashes on demand.
// It must behave like the SQLite store for every batch it accepts (same order, same refusals),
// or engine tests would pass against a store the controller never runs.

#include "ctld/store/store.h"

namespace drover::ctld {

Status MemoryStore::Commit(const WriteBatch& batch) {
  if (Status status = CheckStoreTables(batch); !status) return status;
  if (failures_left_ > 0) {
    --failures_left_;
    return MakeError("memory store: injected commit failure");
  }
  if (crashed_) {
    // The process "died" before this batch was synced: the caller cannot tell, the store can.
    if (kept_before_crash_ == 0) return OkStatus();
    --kept_before_crash_;
  }
  Apply(batch);
  committed_.push_back(batch);
  return OkStatus();
}

Result<Table> MemoryStore::Load(const std::string& table) {
  if (Status status = CheckStoreTable(table); !status) return std::move(status).take_error();
  Table rows;
  auto found = tables_.find(table);
  if (found == tables_.end()) return rows;
  // std::map orders keys as unsigned bytes, like SQLite's BINARY collation.
  rows.assign(found->second.begin(), found->second.end());
  return rows;
}

Result<Table> MemoryStore::LoadRange(const std::string& table, const std::string& after,
                                     const std::string& before, size_t limit) {
  if (Status status = CheckStoreTable(table); !status) return std::move(status).take_error();
  Table rows;
  auto found = tables_.find(table);
  if (found == tables_.end()) return rows;
  for (auto row = found->second.upper_bound(after);
       row != found->second.end() && rows.size() < limit && (before.empty() || row->first < before);
       ++row)
    rows.emplace_back(row->first, row->second);
  return rows;
}

Result<std::optional<std::string>> MemoryStore::Get(const std::string& table,
                                                    const std::string& key) {
  if (Status status = CheckStoreTable(table); !status) return std::move(status).take_error();
  auto found = tables_.find(table);
  if (found == tables_.end()) return std::optional<std::string>();
  auto row = found->second.find(key);
  if (row == found->second.end()) return std::optional<std::string>();
  return std::optional<std::string>(row->second);
}

void MemoryStore::Apply(const WriteBatch& batch) {
  for (const WriteBatch::Put& put : batch.puts) tables_[put.table][put.key] = put.value;
  for (const WriteBatch::Delete& del : batch.deletes) tables_[del.table].erase(del.key);
}

}  // namespace drover::ctld
