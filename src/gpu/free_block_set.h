// The cached free blocks of one allocator pool, in the order c10/cuda/CUDACachingAllocator.cpp's
// BlockComparatorSize gives its BlockPool::blocks: by stream, then size, then address. Best fit
// is then the first entry at or after (stream, size): a lower_bound.
//
// Why not std::set: a replay inserts and erases a free block for nearly every allocation and
// free (tens of thousands for an MoE model; ~9,000 blocks are cached at once for Qwen3-30B-A3B
// QLoRA, ~23,000 for DeepSeek-V3), and a tree node per entry made the replay mostly allocator
// calls and pointer chasing. This is a sorted sequence cut into short sorted chunks: a lookup is
// a binary search over the chunks' last keys and then within one chunk, and an insert or erase
// moves at most one chunk's entries (kMaxChunk). No entry is allocated on its own.
//
// Iterators are (chunk, position) pairs: like a vector's, any insert or erase invalidates them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace trainmem::gpu {

// One cached block. `block` (the allocator's block index) is payload: (stream, size, addr) is
// unique, since no two blocks of a stream share an address.
struct FreeKey {
  std::int64_t size = 0;
  std::int64_t addr = 0;
  std::int32_t stream = 0;
  std::int32_t block = -1;
};

// BlockComparatorSize: stream, then size, then address.
inline bool key_less(const FreeKey& a, const FreeKey& b) {
  if (a.stream != b.stream) return a.stream < b.stream;
  if (a.size != b.size) return a.size < b.size;
  return a.addr < b.addr;
}

class FreeBlockSet {
  // A run of consecutive entries; `last` repeats keys.back() so that finding a chunk reads one
  // contiguous array instead of every chunk's own storage.
  struct Chunk {
    FreeKey last;
    std::vector<FreeKey> keys;  // sorted, non-empty
  };

 public:
  class Iter {
   public:
    const FreeKey& operator*() const { return (*chunks_)[chunk_].keys[pos_]; }
    const FreeKey* operator->() const { return &**this; }
    Iter& operator++();
    Iter& operator--();
    bool operator==(const Iter& o) const { return chunk_ == o.chunk_ && pos_ == o.pos_; }

   private:
    friend class FreeBlockSet;
    Iter(const std::vector<Chunk>* c, std::size_t chunk, std::size_t pos)
        : chunks_(c), chunk_(chunk), pos_(pos) {}
    const std::vector<Chunk>* chunks_;
    std::size_t chunk_;
    std::size_t pos_;
  };

  Iter begin() const { return {&chunks_, 0, 0}; }
  Iter end() const { return {&chunks_, chunks_.size(), 0}; }
  // The first entry not less than (stream, size, addr).
  Iter lower_bound(std::int32_t stream, std::int64_t size, std::int64_t addr = -1) const;

  void insert(const FreeKey& key);
  // Removes the entry equal to `key` (same block too); like std::set::erase, none: no change.
  void erase(const FreeKey& key);
  // Removes the entry at `it` (not end()).
  void erase(Iter it);
  // Replaces the entry at `it` by `key`, which must sort before it: a cached block split from
  // the front keeps its index with a smaller size (alloc_found_block). When `key` belongs in the
  // same chunk, the entries between move up one place: one search and one move instead of an
  // erase's and an insert's.
  void replace(Iter it, const FreeKey& key);

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Largest chunk: an insert or erase moves at most this many 24-byte entries.
  static constexpr std::size_t kMaxChunk = 64;

 private:
  std::size_t chunk_for(const FreeKey& key) const;

  std::vector<Chunk> chunks_;  // in order
  std::size_t size_ = 0;
};

}  // namespace trainmem::gpu
