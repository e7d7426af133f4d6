// The chunked sorted set of cached free blocks (free_block_set.h).
#include "gpu/free_block_set.h"

#include <algorithm>

namespace trainmem::gpu {

FreeBlockSet::Iter& FreeBlockSet::Iter::operator++() {
  if (++pos_ == (*chunks_)[chunk_].keys.size()) {
    ++chunk_;
    pos_ = 0;
  }
  return *this;
}

FreeBlockSet::Iter& FreeBlockSet::Iter::operator--() {
  if (pos_ == 0) {
    --chunk_;
    pos_ = (*chunks_)[chunk_].keys.size();
  }
  --pos_;
  return *this;
}

// The first chunk whose last key is not less than `key` (chunks_.size() when none is).
std::size_t FreeBlockSet::chunk_for(const FreeKey& key) const {
  std::size_t lo = 0;
  std::size_t hi = chunks_.size();
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (key_less(chunks_[mid].last, key)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

FreeBlockSet::Iter FreeBlockSet::lower_bound(std::int32_t stream, std::int64_t size,
                                             std::int64_t addr) const {
  const FreeKey key{size, addr, stream, -1};
  const std::size_t c = chunk_for(key);
  if (c == chunks_.size()) return end();
  const std::vector<FreeKey>& keys = chunks_[c].keys;
  const auto pos = std::lower_bound(keys.begin(), keys.end(), key, key_less);
  return {&chunks_, c, static_cast<std::size_t>(pos - keys.begin())};
}

void FreeBlockSet::insert(const FreeKey& key) {
  ++size_;
  if (chunks_.empty()) {
    chunks_.push_back({key, {}});
    chunks_.back().keys.reserve(kMaxChunk + 1);
    chunks_.back().keys.push_back(key);
    return;
  }
  // Past every chunk's last key: it goes at the end of the last chunk.
  const std::size_t c = std::min(chunk_for(key), chunks_.size() - 1);
  Chunk& chunk = chunks_[c];
  chunk.keys.insert(std::lower_bound(chunk.keys.begin(), chunk.keys.end(), key, key_less), key);
  chunk.last = chunk.keys.back();
  if (chunk.keys.size() <= kMaxChunk) return;
  // Split the full chunk in halves; the upper half becomes the next chunk.
  Chunk upper{chunk.last, {}};
  upper.keys.reserve(kMaxChunk + 1);
  const auto half = chunk.keys.begin() + static_cast<std::ptrdiff_t>(chunk.keys.size() / 2);
  upper.keys.assign(half, chunk.keys.end());
  chunk.keys.erase(half, chunk.keys.end());
  chunk.last = chunk.keys.back();
  chunks_.insert(chunks_.begin() + static_cast<std::ptrdiff_t>(c) + 1, std::move(upper));
}

void FreeBlockSet::erase(const FreeKey& key) {
  const std::size_t c = chunk_for(key);
  if (c == chunks_.size()) return;
  const std::vector<FreeKey>& keys = chunks_[c].keys;
  const auto pos = std::lower_bound(keys.begin(), keys.end(), key, key_less);
  if (key_less(key, *pos) || pos->block != key.block) return;
  erase(Iter{&chunks_, c, static_cast<std::size_t>(pos - keys.begin())});
}

void FreeBlockSet::erase(Iter it) {
  Chunk& chunk = chunks_[it.chunk_];
  chunk.keys.erase(chunk.keys.begin() + static_cast<std::ptrdiff_t>(it.pos_));
  --size_;
  if (chunk.keys.empty()) {
    chunks_.erase(chunks_.begin() + static_cast<std::ptrdiff_t>(it.chunk_));
  } else {
    chunk.last = chunk.keys.back();
  }
}

void FreeBlockSet::replace(Iter it, const FreeKey& key) {
  const bool same_chunk = it.chunk_ == 0 || key_less(chunks_[it.chunk_ - 1].last, key);
  if (!same_chunk) {
    erase(it);
    insert(key);
    return;
  }
  Chunk& chunk = chunks_[it.chunk_];
  const auto old = chunk.keys.begin() + static_cast<std::ptrdiff_t>(it.pos_);
  const auto pos = std::lower_bound(chunk.keys.begin(), old, key, key_less);
  std::move_backward(pos, old, old + 1);
  *pos = key;
  chunk.last = chunk.keys.back();
}

}  // namespace trainmem::gpu
