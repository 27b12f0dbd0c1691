// The live queue's records by job ID, in chunks of consecutive IDs that snapshots share.
//
// Job IDs are dense and increasing, so the table keeps fixed-size chunks of slots indexed by ID.
// Publishing a snapshot copies only the list of chunk pointers (about 100 at 100,000 jobs);
// the engine copies a chunk before changing it only while a snapshot still holds it. A batch
// that submits a few jobs therefore costs a few chunk copies, not a copy of the whole queue.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "ctld/engine/job.h"

namespace drover::ctld {

class JobTable {
 public:
  static constexpr uint64_t kChunkSize = 1024;
  struct Chunk {
    std::array<JobPtr, kChunkSize> slots;
    uint32_t count = 0;
  };
  using ChunkList = std::vector<std::pair<uint64_t, std::shared_ptr<const Chunk>>>;

  // One entry as iteration yields it, shaped like a map's value_type.
  struct Entry {
    uint64_t first;
    const JobPtr& second;
  };

  // Iterates the jobs of a chunk list in ID order.
  class Iterator {
   public:
    Iterator(const ChunkList* chunks, size_t chunk, uint64_t slot)
        : chunks_(chunks), chunk_(chunk), slot_(slot) {
      SkipEmpty();
    }
    Entry operator*() const {
      const auto& [index, chunk] = (*chunks_)[chunk_];
      return {index * kChunkSize + slot_, chunk->slots[slot_]};
    }
    struct Arrow {
      Entry entry;
      const Entry* operator->() const { return &entry; }
    };
    Arrow operator->() const { return {**this}; }
    Iterator& operator++() {
      ++slot_;
      SkipEmpty();
      return *this;
    }
    bool operator==(const Iterator& other) const {
      return chunk_ == other.chunk_ && slot_ == other.slot_;
    }

   private:
    void SkipEmpty() {
      while (chunk_ < chunks_->size()) {
        const Chunk& chunk = *(*chunks_)[chunk_].second;
        while (slot_ < kChunkSize && !chunk.slots[slot_]) ++slot_;
        if (slot_ < kChunkSize) return;
        ++chunk_;
        slot_ = 0;
      }
      slot_ = 0;
    }
    const ChunkList* chunks_;
    size_t chunk_;
    uint64_t slot_;
  };

  // An immutable view for readers: iterates JobPtrs in ID order.
  class View {
   public:
    View() = default;
    View(ChunkList chunks, size_t size) : chunks_(std::move(chunks)), size_(size) {}
    class ValueIterator {
     public:
      explicit ValueIterator(Iterator it) : it_(it) {}
      const JobPtr& operator*() const { return (*it_).second; }
      ValueIterator& operator++() {
        ++it_;
        return *this;
      }
      bool operator==(const ValueIterator& other) const { return it_ == other.it_; }

     private:
      Iterator it_;
    };
    ValueIterator begin() const { return ValueIterator(Iterator(&chunks_, 0, 0)); }
    ValueIterator end() const { return ValueIterator(Iterator(&chunks_, chunks_.size(), 0)); }
    // The first job whose ID is `id` or above.
    ValueIterator From(uint64_t id) const { return ValueIterator(JobTable::From(chunks_, id)); }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    const JobPtr* Find(uint64_t id) const { return JobTable::FindIn(chunks_, id); }

   private:
    ChunkList chunks_;
    size_t size_ = 0;
  };

  Iterator begin() const { return Iterator(&chunks_, 0, 0); }
  Iterator end() const { return Iterator(&chunks_, chunks_.size(), 0); }
  Iterator find(uint64_t id) const;
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t count(uint64_t id) const { return FindIn(chunks_, id) != nullptr; }
  const JobPtr& at(uint64_t id) const;  // the job must be present

  // Inserts or replaces the job with this ID.
  void Set(uint64_t id, JobPtr job);
  void erase(uint64_t id);

  View Share() const { return View(chunks_, size_); }

 private:
  static const JobPtr* FindIn(const ChunkList& chunks, uint64_t id);
  static Iterator From(const ChunkList& chunks, uint64_t id);
  size_t ChunkPosition(uint64_t chunk_index) const;  // lower bound in chunks_
  // The chunk, copied first when a snapshot still shares it.
  Chunk& Writable(size_t position);

  ChunkList chunks_;  // by chunk index (ID / kChunkSize), only chunks holding jobs
  size_t size_ = 0;
};

}  // namespace drover::ctld
