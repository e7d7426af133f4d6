// Invariants of the caching allocator model over random event streams, under every
// PYTORCH_CUDA_ALLOC_CONF rule that walks the cached free blocks (best fit, oversize blocks,
// expandable segments, garbage collection, freeing the cache on a failed cudaMalloc): whatever
// the rules do, what is allocated fits in what is reserved, the largest cached block fits in
// what is reserved and not allocated, and freeing everything leaves nothing allocated. The
// hand-worked values are in caching_allocator_test.cpp; this checks the bookkeeping under load.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "gpu/caching_allocator.h"

namespace trainmem::gpu {
namespace {

constexpr std::int64_t MiB = 1 << 20;

// Allocations of mixed sizes (small pool, 1-10 MiB, large) on two streams over four phases,
// freed in random order, with everything freed in the last phase.
std::vector<AllocEvent> random_stream(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<AllocEvent> ev;
  std::vector<std::int32_t> live;
  std::int32_t next = 0;
  for (std::int16_t phase = 0; phase < 3; ++phase) {
    for (int k = 0; k < 400; ++k) {
      if (live.empty() || rng() % 3 != 0) {
        const std::int64_t ranges[] = {1 * MiB, 12 * MiB, 90 * MiB};
        const std::int64_t bytes = 1 + static_cast<std::int64_t>(rng() % ranges[rng() % 3]);
        const auto count = static_cast<std::int32_t>(rng() % 4 == 0 ? 1 + rng() % 5 : 1);
        const auto stream = static_cast<std::int16_t>(rng() % 5 == 0 ? 1 : 0);
        ev.push_back({Op::alloc, stream, phase, -1, next, count, bytes});
        live.push_back(next++);
      } else {
        const std::size_t at = rng() % live.size();
        ev.push_back({Op::free, 0, phase, -1, live[at], 1, 0});
        live[at] = live.back();
        live.pop_back();
      }
    }
  }
  for (const std::int32_t id : live) ev.push_back({Op::free, 0, 3, -1, id, 1, 0});
  return ev;
}

void expect_consistent(const ReplayResult& r) {
  std::int64_t peak_allocated = 0;
  std::int64_t peak_reserved = 0;
  for (std::size_t p = 0; p < r.phases.size(); ++p) {
    const PhaseStats& s = r.phases[p];
    if (!s.seen) continue;
    EXPECT_LE(s.allocated_bytes, s.reserved_bytes) << p;
    EXPECT_LE(s.end_allocated_bytes, s.end_reserved_bytes) << p;
    EXPECT_LE(s.largest_free_bytes, s.end_reserved_bytes - s.end_allocated_bytes) << p;
    EXPECT_GE(s.peak_allocated_bytes, peak_allocated) << p;  // peaks never fall
    EXPECT_GE(s.peak_reserved_bytes, peak_reserved) << p;
    peak_allocated = s.peak_allocated_bytes;
    peak_reserved = s.peak_reserved_bytes;
  }
  EXPECT_EQ(r.peak_allocated_bytes, peak_allocated);
  EXPECT_LE(r.peak_allocated_bytes, r.peak_reserved_bytes);
}

TEST(CachingAllocatorInvariants, RandomStreamsUnderEveryRule) {
  const char* confs[] = {
      "",
      "max_split_size_mb:64",
      "roundup_power2_divisions:4",
      "expandable_segments:True",
      "garbage_collection_threshold:0.5",
      "expandable_segments:True,max_split_size_mb:128",
      "large_segment_size_mb:64,max_split_size_mb:64,max_non_split_rounding_mb:96",
      "expandable_segments:True,large_segment_size_mb:32"};
  std::int64_t flushes = 0;  // the limited runs did hit the free-the-cache path
  std::int64_t released = 0;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const std::vector<AllocEvent> ev = random_stream(seed);
    for (const char* c : confs) {
      SCOPED_TRACE(std::string(c) + " seed " + std::to_string(seed));
      auto conf = parse_alloc_conf(c);
      ASSERT_TRUE(conf.ok());
      // Unlimited: every free returns its bytes and the cache covers what was freed.
      const ReplayResult u = replay(ev, *conf, {}, 4);
      ASSERT_FALSE(u.oom);
      expect_consistent(u);
      EXPECT_EQ(u.phases[3].end_allocated_bytes, 0);
      EXPECT_GT(u.phases[3].largest_free_bytes, 0);
      // A device that cannot hold the unlimited peak: cache flushes, GC with a fraction, and
      // (for some seeds) running out; the figures stay consistent up to where it stops.
      ReplayLimits lim;
      lim.device_bytes = u.peak_reserved_bytes * 3 / 4;
      lim.allowed_bytes = u.peak_reserved_bytes * 7 / 8;
      const ReplayResult t = replay(ev, *conf, lim, 4);
      expect_consistent(t);
      EXPECT_LE(t.peak_reserved_bytes, lim.device_bytes);
      if (!t.oom) {
        EXPECT_EQ(t.phases[3].end_allocated_bytes, 0);
      }
      flushes += t.alloc_retries;
      released += t.segments_released;
    }
  }
  EXPECT_GT(flushes, 0);
  EXPECT_GT(released, 0);
}

}  // namespace
}  // namespace trainmem::gpu
