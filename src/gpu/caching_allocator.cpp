// The caching allocator model. Every rule below names the function of PyTorch's
// c10/cuda/CUDACachingAllocator.cpp (DeviceCachingAllocator) it follows; the code is written from
// reading that file, not copied. Blocks live in one vector and link to their neighbours in a
// segment by index; free blocks sit in per-pool sets ordered by (stream, size, address), as the
// allocator's BlockComparatorSize orders them, so best fit is a lower_bound (free_block_set.h).
#include "gpu/caching_allocator.h"

#include <algorithm>
#include <optional>

#include "gpu/free_block_set.h"

namespace trainmem::gpu {

std::int64_t round_size(std::int64_t bytes, const AllocatorConfig& config) {
  // round_size(): below 512 B -> 512 B; with roundup_power2_divisions set for the size's
  // power-of-two interval, up to the next of `divisions` equal steps of that interval
  // (roundup_power2_next_division); otherwise up to a multiple of 512 B.
  if (bytes < kMinBlockSize) return kMinBlockSize;
  if (!config.any_roundup_divisions) {
    return kMinBlockSize * ((bytes + kMinBlockSize - 1) / kMinBlockSize);
  }
  const int log_size = 63 - __builtin_clzll(static_cast<unsigned long long>(bytes));
  const int index = std::clamp(log_size - 20, 0, kRoundUpPowerOfTwoIntervals - 1);
  const std::int64_t divisions =
      config.roundup_power2_divisions.empty()
          ? 0
          : config.roundup_power2_divisions[static_cast<std::size_t>(index)];
  if (divisions > 1 && bytes > kMinBlockSize * divisions) {
    if ((bytes & (bytes - 1)) == 0) return bytes;
    const std::int64_t floor2 = std::int64_t{1} << log_size;
    int log_div = 0;
    for (std::int64_t v = divisions; v > 1; v >>= 1) ++log_div;
    const std::int64_t step = floor2 >> log_div;
    if (step == 0) return floor2 << 1;
    const std::int64_t base = bytes & ~(step - 1);
    return base == bytes ? bytes : base + step;
  }
  return kMinBlockSize * ((bytes + kMinBlockSize - 1) / kMinBlockSize);
}

std::int64_t allocation_size(std::int64_t size, const AllocatorConfig& config) {
  // get_allocation_size(): small requests get a 2 MiB segment, 1-10 MiB one of
  // large_segment_size (20 MiB by default), larger ones their size rounded up to 2 MiB.
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return config.large_segment_size_bytes;
  return kRoundLarge * ((size + kRoundLarge - 1) / kRoundLarge);
}

namespace {

// 40 bytes: a dense 8B model's replay touches ~2,100 blocks, a page per ~100 of them. What only
// expandable segments and garbage collection read is kept aside (Aside).
struct Block {
  std::int64_t addr = 0;
  std::int64_t size = 0;
  std::int64_t requested = 0;
  int prev = -1;
  int next = -1;
  int stream = 0;
  bool small = false;
  bool allocated = false;
  bool mapped = true;
  bool expandable = false;
};
static_assert(sizeof(Block) == 40);

// A block's fields that only some settings read, kept (Model::aside_) only under them.
struct Aside {
  std::int64_t segment_base = 0;  // expandable segments: start of the reserved address range
  std::int64_t gc_base = 0;       // pool's get_free_block count when cached (GC age)
};

struct Pool {
  bool small = false;
  FreeBlockSet blocks;        // cached free (mapped) blocks, by (stream, size, address)
  FreeBlockSet unmapped;      // expandable segments' unmapped ranges, by (stream, address): size 0
  std::int64_t gc_calls = 0;  // get_free_blocks_call_count
};

class Model {
 public:
  Model(const AllocatorConfig& c, const ReplayLimits& l) : cfg_(c), lim_(l) {
    small_.small = true;
    allowed_ = l.allowed_bytes;
    if (allowed_ == 0 && c.per_process_memory_fraction > 0 && l.device_bytes != kUnlimited) {
      allowed_ = static_cast<std::int64_t>(c.per_process_memory_fraction *
                                           static_cast<double>(l.device_bytes));
    }
    keep_aside_ = c.expandable_segments || gc_enabled();
  }

  // malloc(): round, pick the pool, best fit from the cache; else (after GC) a new segment, then
  // free oversize cached blocks and retry, then free every unsplit cached block and retry.
  int malloc(std::int64_t orig, int stream, ReplayResult& r) {
    const std::int64_t size = round_size(orig, cfg_);
    Pool& pool = size <= kSmallSize ? small_ : large_;
    const std::int64_t alloc = allocation_size(size, cfg_);
    const FreeBlockSet::Iter cached = get_free_block(pool, size, stream);
    if (cached != pool.blocks.end()) {
      const int found = cached->block;
      return alloc_found_block(pool, found, size, orig, should_split(pool, found, size), cached);
    }
    if (gc_enabled()) garbage_collect(r);
    int found = alloc_block(pool, size, alloc, stream, r);
    if (found < 0 && release_available_cached_blocks(pool, size, stream, r)) {
      found = alloc_block(pool, size, alloc, stream, r);
    }
    if (found < 0) {
      release_cached_blocks(r);
      ++r.alloc_retries;
      found = alloc_block(pool, size, alloc, stream, r);
    }
    if (found < 0) return -1;
    return alloc_found_block(pool, found, size, orig, should_split(pool, found, size));
  }

  // `n` requests of `orig` bytes at once, when no cached block of the pool and stream could serve
  // one: then malloc() would cut new segments one after another, each split while its rest
  // still fits a request (alloc_found_block); the blocks are laid out directly, with only each
  // segment's final remainder cached. Returns false (nothing done) when that precondition or a
  // simple device check does not hold, or with GC, fractions or expandable segments; the caller
  // then replays one malloc at a time. Results are identical (tests compare both paths).
  bool bulk_malloc(std::int64_t orig, std::int32_t n, int stream, std::vector<int>& out,
                   ReplayResult& r) {
    if (n < 2 || cfg_.expandable_segments || gc_enabled() || allowed_ > 0) return false;
    const std::int64_t size = round_size(orig, cfg_);
    Pool& pool = size <= kSmallSize ? small_ : large_;
    const std::int64_t alloc = allocation_size(size, cfg_);
    auto it = pool.blocks.lower_bound(stream, size);
    if (it != pool.blocks.end() && it->stream == stream) return false;
    // One segment: blocks of `size` split off the front while should_split holds and the rest
    // still fits a request; the last block takes the rest when it may not be split.
    auto split_ok = [&](std::int64_t rest) {
      const std::int64_t remaining = rest - size;
      if (pool.small) return remaining >= kMinBlockSize;
      return size < cfg_.max_split_size_bytes && remaining > kSmallSize;
    };
    std::vector<std::int64_t>& per_segment = per_segment_;
    per_segment.clear();
    std::int64_t rest = alloc;
    while (rest >= size) {
      if (split_ok(rest)) {
        per_segment.push_back(size);
        rest -= size;
      } else {
        per_segment.push_back(rest);
        rest = 0;
      }
    }
    const auto k = static_cast<std::int64_t>(per_segment.size());
    const std::int64_t segments = (n + k - 1) / k;
    if (device_limit() != kUnlimited && reserved_ + segments * alloc > device_limit()) return false;
    std::int64_t left = n;
    for (std::int64_t s = 0; s < segments; ++s) {
      std::int64_t addr = next_addr_;
      next_addr_ += alloc;
      int prev = -1;
      std::int64_t used = 0;
      for (std::int64_t j = 0; j < k && left > 0; ++j, --left) {
        Block blk;
        blk.addr = addr;
        blk.size = per_segment[static_cast<std::size_t>(j)];
        blk.stream = stream;
        blk.small = pool.small;
        blk.allocated = true;
        blk.requested = orig;
        blk.prev = prev;
        const int i = new_block(blk);
        if (prev >= 0) b_[prev].next = i;
        prev = i;
        addr += blk.size;
        used += blk.size;
        allocated_ += blk.size;
        requested_ += orig;
        out.push_back(i);
      }
      if (used < alloc) {
        Block rem;
        rem.addr = addr;
        rem.size = alloc - used;
        rem.stream = stream;
        rem.small = pool.small;
        rem.prev = prev;
        const int i = new_block(rem);
        b_[prev].next = i;
        insert_free(pool, i);
      }
      reserved_ += alloc;
      ++r.segments_allocated;
    }
    return true;
  }

  // free() then free_block(): merge with free neighbours and cache.
  void free(int i) {
    Block& blk = b_[i];
    allocated_ -= blk.size;
    requested_ -= blk.requested;
    blk.allocated = false;
    blk.requested = 0;
    Pool& pool = pool_of(i);
    try_merge(i, b_[i].prev, pool);
    try_merge(i, b_[i].next, pool);
    insert_free(pool, i);
  }

  void reserve(std::size_t tensors) {
    b_.reserve(2 * tensors + 64);
    if (keep_aside_) aside_.reserve(2 * tensors + 64);
  }
  std::int64_t allocated() const { return allocated_; }
  std::int64_t reserved() const { return reserved_; }
  std::int64_t requested() const { return requested_; }

  std::int64_t largest_free() const {
    std::int64_t best = 0;
    // The set is ordered by (stream, size): each stream's largest is its last entry.
    for (const Pool* p : {&small_, &large_}) {
      for (auto it = p->blocks.begin(); it != p->blocks.end();) {
        const auto end = p->blocks.lower_bound(it->stream + 1, -1);
        auto last = end;
        best = std::max(best, (--last)->size);
        it = end;
      }
    }
    return best;
  }

 private:
  bool gc_enabled() const { return allowed_ > 0 && cfg_.garbage_collection_threshold > 0.0; }
  Pool& pool_of(int i) { return b_[i].small ? small_ : large_; }
  FreeKey size_key(int i) const { return {b_[i].size, b_[i].addr, b_[i].stream, i}; }
  FreeKey addr_key(int i) const { return {0, b_[i].addr, b_[i].stream, i}; }
  bool is_split(int i) const { return b_[i].prev >= 0 || b_[i].next >= 0; }

  // A new block `blk`; `like`: the block it was cut from, whose Aside it shares (else none).
  int new_block(const Block& blk, int like = -1) {
    int i = 0;
    if (!dead_.empty()) {
      i = dead_.back();
      dead_.pop_back();
      b_[i] = blk;
    } else {
      b_.push_back(blk);
      i = static_cast<int>(b_.size()) - 1;
    }
    if (keep_aside_) {
      if (aside_.size() < b_.size()) aside_.resize(b_.size());
      aside_[i] = like >= 0 ? aside_[like] : Aside{};
    }
    return i;
  }
  void set_gc_base(const Pool& pool, int i) {
    if (keep_aside_) aside_[i].gc_base = pool.gc_calls;
  }
  void kill(int i) {
    b_[i] = Block{};
    dead_.push_back(i);
  }
  void insert_free(Pool& pool, int i) {
    set_gc_base(pool, i);
    pool.blocks.insert(size_key(i));
  }

  // get_free_block(): the smallest cached block of the stream that fits. Expandable blocks count
  // the unmapped space after them; oversize blocks (>= max_split_size) serve only requests that
  // are themselves oversize and within max_non_split_rounding (20 MiB by default) of them. Returns
  // its entry in the pool's set (end() when none), left there for alloc_found_block to update.
  FreeBlockSet::Iter get_free_block(Pool& pool, std::int64_t size, int stream) {
    if (gc_enabled()) ++pool.gc_calls;
    auto it = pool.blocks.lower_bound(stream, size);
    if (it == pool.blocks.end() || it->stream != stream) return pool.blocks.end();
    int i = it->block;
    if (b_[i].expandable) {
      auto expandable_size = [&](int k) {
        const int n = b_[k].next;
        return b_[k].size + (n >= 0 && !b_[n].mapped ? b_[n].size : 0);
      };
      auto next = it;
      ++next;
      while (b_[i].expandable && next != pool.blocks.end() && next->stream == stream &&
             expandable_size(next->block) < expandable_size(i)) {
        it = next;
        ++next;
        i = it->block;
      }
    }
    const std::int64_t max_split = cfg_.max_split_size_bytes;
    if (size < max_split && b_[i].size >= max_split) return pool.blocks.end();
    // The block fits (b_[i].size >= size): its excess, not size + rounding, which a
    // max_non_split_rounding_mb near the largest size would overflow.
    if (size >= max_split && b_[i].size - size >= cfg_.max_non_split_rounding_bytes) {
      return pool.blocks.end();
    }
    return it;
  }

  // should_split(): small pool and expandable segments split any remainder of >= 512 B; the
  // large pool only when the request is below max_split_size and more than 1 MiB remains.
  bool should_split(const Pool& pool, int i, std::int64_t size) const {
    const std::int64_t remaining = b_[i].size - size;
    if (pool.small || cfg_.expandable_segments) return remaining >= kMinBlockSize;
    return size < cfg_.max_split_size_bytes && remaining > kSmallSize;
  }

  // alloc_found_block(): the front `size` bytes become the allocation, the rest stays cached.
  // `cached`: the block's entry when it came from the cache (a new segment has none); the
  // remainder takes its place.
  int alloc_found_block(Pool& pool, int i, std::int64_t size, std::int64_t orig, bool split,
                        std::optional<FreeBlockSet::Iter> cached = std::nullopt) {
    if (split) {
      Block front = b_[i];
      front.size = size;
      front.next = i;
      const int j = new_block(front, i);
      if (b_[j].prev >= 0) b_[b_[j].prev].next = j;
      b_[i].prev = j;
      b_[i].addr += size;
      b_[i].size -= size;
      if (cached) {
        set_gc_base(pool, i);
        pool.blocks.replace(*cached, size_key(i));
      } else {
        insert_free(pool, i);
      }
      i = j;
    } else if (cached) {
      pool.blocks.erase(*cached);
    }
    b_[i].allocated = true;
    b_[i].requested = orig;
    allocated_ += b_[i].size;
    requested_ += orig;
    return i;
  }

  // try_merge_blocks(): absorb a free neighbour with the same mapped state; `dst` is in no set.
  void try_merge(int dst, int src, Pool& pool) {
    if (src < 0 || b_[src].allocated || b_[src].mapped != b_[dst].mapped) return;
    if (b_[dst].prev == src) {
      b_[dst].addr = b_[src].addr;
      b_[dst].prev = b_[src].prev;
      if (b_[dst].prev >= 0) b_[b_[dst].prev].next = dst;
    } else {
      b_[dst].next = b_[src].next;
      if (b_[dst].next >= 0) b_[b_[dst].next].prev = dst;
    }
    b_[dst].size += b_[src].size;
    if (b_[src].mapped) {
      pool.blocks.erase(size_key(src));
    } else {
      pool.unmapped.erase(addr_key(src));
    }
    kill(src);
  }

  std::int64_t device_limit() const { return lim_.device_bytes; }

  // alloc_block(): a new segment of `alloc` bytes by cudaMalloc, failing beyond the device (or
  // the per-process fraction); with expandable segments, pages are mapped instead.
  int alloc_block(Pool& pool, std::int64_t size, std::int64_t alloc, int stream, ReplayResult& r) {
    if (allowed_ > 0 && reserved_ + alloc > allowed_) return -1;
    if (cfg_.expandable_segments) return try_allocate_expandable_block(pool, size, stream, r);
    if (reserved_ + alloc > device_limit()) return -1;
    Block blk;
    blk.addr = next_addr_;
    blk.size = alloc;
    blk.stream = stream;
    blk.small = pool.small;
    next_addr_ += alloc;
    reserved_ += alloc;
    ++r.segments_allocated;
    return new_block(blk);
  }

  // The page an expandable segment maps: 2 MiB in the small pool, large_segment_size in the large.
  std::int64_t granule(const Pool& pool) const {
    return pool.small ? kSmallBuffer : cfg_.large_segment_size_bytes;
  }

  // find_expandable_block(): the lowest address where free and unmapped blocks of the stream
  // together hold `size`; else a new segment reserving address space for 9/8 of the device.
  int find_expandable_block(Pool& pool, std::int64_t size, int stream) {
    auto allocatable = [&](int k) { return k >= 0 && !b_[k].allocated; };
    for (auto it = pool.unmapped.lower_bound(stream, 0);
         it != pool.unmapped.end() && it->stream == stream; ++it) {
      int c = it->block;
      if (allocatable(b_[c].prev)) c = b_[c].prev;
      std::int64_t bytes = 0;
      for (int k = c; bytes < size && allocatable(k); k = b_[k].next) bytes += b_[k].size;
      if (bytes >= size) return c;
    }
    const std::int64_t g = granule(pool);
    const std::int64_t device =
        device_limit() == kUnlimited ? (std::int64_t{1} << 44) : device_limit();
    // PyTorch reserves 9/8 of the card, more than any request a card can map. Without a device
    // limit a request can pass 2^44 B: the segment then spans the request, as a card that large
    // would (found by replay_fuzz: the mapping loop ran past the segment's last block).
    const std::int64_t space =
        std::max((device + device / 8 + g - 1) / g * g, (size + g - 1) / g * g);
    Block blk;
    blk.addr = next_addr_;
    blk.size = space;
    blk.stream = stream;
    blk.small = pool.small;
    blk.mapped = false;
    blk.expandable = true;
    const int i = new_block(blk);
    aside_[i].segment_base = next_addr_;  // expandable: kept aside
    next_addr_ += space;
    pool.unmapped.insert(addr_key(i));
    return i;
  }

  // map_block(): map whole granules (2 MiB small, 20 MiB large) from the start of an unmapped
  // block; the rest stays unmapped. Fails beyond the device.
  bool map_block(Pool& pool, int i, std::int64_t size, ReplayResult& r) {
    const std::int64_t g = granule(pool);
    const std::int64_t mapped = std::min(b_[i].size, (size + g - 1) / g * g);
    if (reserved_ + mapped > device_limit()) return false;
    pool.unmapped.erase(addr_key(i));
    b_[i].mapped = true;
    if (mapped < b_[i].size) {
      Block rest = b_[i];
      rest.addr += mapped;
      rest.size -= mapped;
      rest.prev = i;
      rest.mapped = false;
      const int j = new_block(rest, i);
      if (b_[j].next >= 0) b_[b_[j].next].prev = j;
      b_[i].next = j;
      b_[i].size = mapped;
      pool.unmapped.insert(addr_key(j));
    }
    try_merge(i, b_[i].prev, pool);
    try_merge(i, b_[i].next, pool);
    insert_free(pool, i);
    reserved_ += mapped;
    ++r.segments_allocated;
    return true;
  }

  int try_allocate_expandable_block(Pool& pool, std::int64_t size, int stream, ReplayResult& r) {
    int c = find_expandable_block(pool, size, stream);
    if (!b_[c].mapped && !map_block(pool, c, std::min(b_[c].size, size), r)) return -1;
    while (b_[c].size < size) {
      const int n = b_[c].next;
      // find_expandable_block() found room for `size`, so a next block exists; never read past.
      if (n < 0) return -1;
      if (!map_block(pool, n, std::min(size - b_[c].size, b_[n].size), r)) return -1;
      c = n;  // map_block merged c into n
    }
    pool.blocks.erase(size_key(c));
    return c;
  }

  // release_block(): cudaFree a whole cached segment.
  void release_block(Pool& pool, int i, ReplayResult& r) {
    pool.blocks.erase(size_key(i));
    reserved_ -= b_[i].size;
    ++r.segments_released;
    kill(i);
  }

  // unmap_block(): give back the whole granules inside a free expandable block.
  void unmap_block(Pool& pool, int i, ReplayResult& r) {
    const std::int64_t g = granule(pool);
    const std::int64_t base = aside_[i].segment_base;
    const std::int64_t begin = base + (b_[i].addr - base + g - 1) / g * g;
    const std::int64_t end = base + (b_[i].addr + b_[i].size - base) / g * g;
    if (begin >= end) return;
    pool.blocks.erase(size_key(i));
    if (begin > b_[i].addr) {
      Block before = b_[i];
      before.size = begin - b_[i].addr;
      before.next = i;
      const int j = new_block(before, i);
      if (b_[j].prev >= 0) b_[b_[j].prev].next = j;
      b_[i].prev = j;
      insert_free(pool, j);
    }
    const std::int64_t stop = b_[i].addr + b_[i].size;
    if (stop > end) {
      Block after = b_[i];
      after.addr = end;
      after.size = stop - end;
      after.prev = i;
      const int j = new_block(after, i);
      if (b_[j].next >= 0) b_[b_[j].next].prev = j;
      b_[i].next = j;
      insert_free(pool, j);
    }
    b_[i].addr = begin;
    b_[i].size = end - begin;
    b_[i].mapped = false;
    try_merge(i, b_[i].prev, pool);
    try_merge(i, b_[i].next, pool);
    pool.unmapped.insert(addr_key(i));
    reserved_ -= end - begin;
    ++r.segments_released;
  }

  // release_available_cached_blocks(): with max_split_size set, free one oversize cached block
  // that covers the request, else the largest oversize ones until enough is freed.
  bool release_available_cached_blocks(Pool& pool, std::int64_t size, int stream, ReplayResult& r) {
    const std::int64_t max_split = cfg_.max_split_size_bytes;
    if (max_split == kUnlimited) return false;
    const std::int64_t key = std::max(size, max_split);
    auto it = pool.blocks.lower_bound(stream, key);
    if (it != pool.blocks.end() && it->stream == stream) {
      const int i = it->block;
      if (is_split(i) || b_[i].expandable) return false;
      release_block(pool, i, r);
      return true;
    }
    std::vector<int> victims;
    std::int64_t total = 0;
    while (it != pool.blocks.begin() && total < key) {
      --it;
      const int i = it->block;
      if (it->stream != stream || b_[i].size < max_split) break;
      if (is_split(i) || b_[i].expandable) continue;
      victims.push_back(i);
      total += b_[i].size;
    }
    for (int i : victims) release_block(pool, i, r);
    return total >= key;
  }

  // release_cached_blocks() / release_blocks(): free every unsplit cached segment; unmap the free
  // pages of expandable segments, dropping a segment left wholly unmapped.
  void release_cached_blocks(ReplayResult& r) {
    for (Pool* pool : {&large_, &small_}) {
      std::vector<int> whole;
      std::vector<int> expandable;
      for (const FreeKey& k : pool->blocks) {
        const int i = k.block;
        if (b_[i].expandable) {
          expandable.push_back(i);
        } else if (!is_split(i)) {
          whole.push_back(i);
        }
      }
      for (int i : whole) release_block(*pool, i, r);
      for (int i : expandable) {
        unmap_block(*pool, i, r);
        if (!b_[i].mapped && !is_split(i)) {
          pool->unmapped.erase(addr_key(i));
          kill(i);
        }
      }
    }
  }

  // garbage_collect_cached_blocks(): above threshold x allowed memory, free unsplit large cached
  // blocks at least as old (in get_free_block calls) as the average, until enough is reclaimed.
  void garbage_collect(ReplayResult& r) {
    const auto threshold = static_cast<std::int64_t>(cfg_.garbage_collection_threshold *
                                                     static_cast<double>(allowed_));
    if (reserved_ <= threshold) return;
    const std::int64_t target = reserved_ - threshold;
    std::int64_t total_age = 0;
    std::int64_t count = 0;
    for (const FreeKey& k : large_.blocks) {
      const int i = k.block;
      if (is_split(i)) continue;
      total_age += large_.gc_calls - aside_[i].gc_base;
      ++count;
    }
    std::int64_t reclaimed = 0;
    bool freed = true;
    while (reclaimed < target && freed && count > 0) {
      const double threshold_age = static_cast<double>(total_age) / static_cast<double>(count);
      freed = false;
      std::vector<int> victims;
      for (const FreeKey& k : large_.blocks) {
        const int i = k.block;
        const std::int64_t age = large_.gc_calls - aside_[i].gc_base;
        if (!is_split(i) && static_cast<double>(age) >= threshold_age) {
          victims.push_back(i);
          total_age -= age;
          --count;
        }
      }
      for (int i : victims) {
        freed = true;
        reclaimed += b_[i].size;
        release_block(large_, i, r);
      }
    }
  }

  AllocatorConfig cfg_;
  ReplayLimits lim_;
  std::int64_t allowed_ = 0;
  std::vector<Block> b_;
  std::vector<Aside> aside_;  // per block, when keep_aside_ (else empty)
  bool keep_aside_ = false;   // expandable segments or garbage collection are on
  std::vector<int> dead_;
  std::vector<std::int64_t> per_segment_;  // bulk_malloc's scratch, kept between calls
  Pool small_;
  Pool large_;
  std::int64_t next_addr_ = 0;
  std::int64_t allocated_ = 0;
  std::int64_t reserved_ = 0;
  std::int64_t requested_ = 0;
};

}  // namespace

ReplayResult replay(const std::vector<AllocEvent>& events, const AllocatorConfig& config,
                    const ReplayLimits& limits, int phase_count, bool fast) {
  ReplayResult r;
  int max_phase = 0;
  std::int32_t max_id = 0;
  for (const AllocEvent& e : events) {
    max_phase = std::max(max_phase, static_cast<int>(e.phase));
    max_id = std::max(max_id, e.id);
  }
  r.phases.resize(static_cast<std::size_t>(std::max(max_phase + 1, phase_count)));
  Model m(config, limits);
  std::size_t tensors = 0;
  for (const AllocEvent& e : events)
    tensors += e.op == Op::alloc ? static_cast<std::size_t>(e.count) : 0;
  m.reserve(tensors);
  // Blocks of each live id: a run in `blocks` from first[id], count[id] long.
  std::vector<std::int64_t> first(static_cast<std::size_t>(max_id) + 1, -1);
  std::vector<std::int32_t> count(static_cast<std::size_t>(max_id) + 1, 0);
  std::vector<int> blocks;
  blocks.reserve(tensors);
  int phase = events.empty() ? 0 : events.front().phase;
  auto note = [&](PhaseStats& s) {
    s.seen = true;
    s.allocated_bytes = std::max(s.allocated_bytes, m.allocated());
    s.reserved_bytes = std::max(s.reserved_bytes, m.reserved());
    s.requested_bytes = std::max(s.requested_bytes, m.requested());
    r.peak_allocated_bytes = std::max(r.peak_allocated_bytes, m.allocated());
    r.peak_reserved_bytes = std::max(r.peak_reserved_bytes, m.reserved());
    r.peak_requested_bytes = std::max(r.peak_requested_bytes, m.requested());
  };
  auto close = [&](int p) {
    PhaseStats& s = r.phases[static_cast<std::size_t>(p)];
    if (!s.seen) return;
    s.largest_free_bytes = m.largest_free();
    s.end_allocated_bytes = m.allocated();
    s.end_reserved_bytes = m.reserved();
    s.peak_allocated_bytes = r.peak_allocated_bytes;
    s.peak_reserved_bytes = r.peak_reserved_bytes;
  };
  for (std::size_t k = 0; k < events.size(); ++k) {
    const AllocEvent& e = events[k];
    PhaseStats& s = r.phases[static_cast<std::size_t>(e.phase)];
    while (phase < e.phase) {
      // What a phase inherits is live in it (reset_peak_memory_stats semantics), also in a
      // phase with no events of its own.
      close(phase);
      ++phase;
      note(r.phases[static_cast<std::size_t>(phase)]);
    }
    const auto id = static_cast<std::size_t>(e.id);
    if (e.op == Op::free) {
      for (std::int32_t n = 0; n < count[id]; ++n) {
        m.free(blocks[static_cast<std::size_t>(first[id] + n)]);
      }
      count[id] = 0;
      note(s);
      continue;
    }
    first[id] = static_cast<std::int64_t>(blocks.size());
    if (fast && m.bulk_malloc(e.bytes, e.count, e.stream, blocks, r)) {
      count[id] = e.count;
      note(s);
      continue;
    }
    for (std::int32_t n = 0; n < e.count; ++n) {
      const int i = m.malloc(e.bytes, e.stream, r);
      if (i < 0) {
        r.oom = true;
        r.oom_event = static_cast<std::int64_t>(k);
        r.oom_request_bytes = round_size(e.bytes, config);
        r.oom_phase = e.phase;
        note(s);
        close(phase);
        return r;
      }
      blocks.push_back(i);
      ++count[id];
      note(s);
    }
  }
  if (events.empty()) return r;
  close(phase);
  for (++phase; phase < static_cast<int>(r.phases.size()); ++phase) {
    note(r.phases[static_cast<std::size_t>(phase)]);
    close(phase);
  }
  return r;
}

}  // namespace trainmem::gpu
