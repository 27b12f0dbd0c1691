// See job_table.h.
#include "ctld/engine/job_table.h"

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <string>

namespace drover::ctld {
namespace {

bool ChunkBefore(const std::pair<uint64_t, std::shared_ptr<const JobTable::Chunk>>& entry,
                 uint64_t index) {
  return entry.first < index;
}

}  // namespace

const JobPtr* JobTable::FindIn(const ChunkList& chunks, uint64_t id) {
  uint64_t index = id / kChunkSize;
  auto it = std::lower_bound(chunks.begin(), chunks.end(), index, ChunkBefore);
  if (it == chunks.end() || it->first != index) return nullptr;
  const JobPtr& slot = it->second->slots[id % kChunkSize];
  return slot ? &slot : nullptr;
}

JobTable::Iterator JobTable::From(const ChunkList& chunks, uint64_t id) {
  uint64_t index = id / kChunkSize;
  auto it = std::lower_bound(chunks.begin(), chunks.end(), index, ChunkBefore);
  size_t position = static_cast<size_t>(it - chunks.begin());
  // In a later chunk, or past the end, the walk starts at that chunk's first job.
  uint64_t slot = it != chunks.end() && it->first == index ? id % kChunkSize : 0;
  return Iterator(&chunks, position, slot);
}

size_t JobTable::ChunkPosition(uint64_t chunk_index) const {
  return std::lower_bound(chunks_.begin(), chunks_.end(), chunk_index, ChunkBefore) -
         chunks_.begin();
}

JobTable::Iterator JobTable::find(uint64_t id) const {
  size_t position = ChunkPosition(id / kChunkSize);
  if (position == chunks_.size() || chunks_[position].first != id / kChunkSize ||
      !chunks_[position].second->slots[id % kChunkSize])
    return end();
  return Iterator(&chunks_, position, id % kChunkSize);
}

const JobPtr& JobTable::at(uint64_t id) const {
  const JobPtr* job = FindIn(chunks_, id);
  if (!job) throw std::out_of_range("job " + std::to_string(id) + " is not in the table");
  return *job;
}

JobTable::Chunk& JobTable::Writable(size_t position) {
  std::shared_ptr<const Chunk>& chunk = chunks_[position].second;
  // Only this table's owner copies chunk pointers out of it, so a count of one means no snapshot
  // can reach the chunk: it may be changed in place. (Every chunk is created non-const.)
  if (chunk.use_count() > 1) {
    chunk = std::make_shared<Chunk>(*chunk);
  } else {
    // The last reader let go with a release decrement; pair it before writing in place.
    std::atomic_thread_fence(std::memory_order_acquire);
  }
  return const_cast<Chunk&>(*chunk);
}

void JobTable::Set(uint64_t id, JobPtr job) {
  uint64_t index = id / kChunkSize;
  size_t position = ChunkPosition(index);
  if (position == chunks_.size() || chunks_[position].first != index)
    chunks_.insert(chunks_.begin() + static_cast<std::ptrdiff_t>(position),
                   {index, std::make_shared<Chunk>()});
  Chunk& chunk = Writable(position);
  JobPtr& slot = chunk.slots[id % kChunkSize];
  if (!slot) {
    ++chunk.count;
    ++size_;
  }
  slot = std::move(job);
}

void JobTable::erase(uint64_t id) {
  uint64_t index = id / kChunkSize;
  size_t position = ChunkPosition(index);
  if (position == chunks_.size() || chunks_[position].first != index ||
      !chunks_[position].second->slots[id % kChunkSize])
    return;
  --size_;
  if (chunks_[position].second->count == 1) {
    chunks_.erase(chunks_.begin() + static_cast<std::ptrdiff_t>(position));
    return;
  }
  Chunk& chunk = Writable(position);
  chunk.slots[id % kChunkSize].reset();
  --chunk.count;
}

}  // namespace drover::ctld
