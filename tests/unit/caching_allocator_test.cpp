// The caching allocator model against small event streams worked by hand from the rules of
// c10/cuda/CUDACachingAllocator.cpp (docs/gpu.md). MiB = 1,048,576 B.
#include "gpu/caching_allocator.h"

#include <gtest/gtest.h>

#include "trainmem/device.h"

namespace trainmem::gpu {
namespace {

constexpr std::int64_t MiB = 1 << 20;

struct Stream {
  std::vector<AllocEvent> events;
  std::int32_t next_id = 0;
  std::int32_t alloc(std::int64_t bytes, std::int16_t phase = 0, std::int16_t stream = 0) {
    events.push_back({Op::alloc, stream, phase, -1, next_id, 1, bytes});
    return next_id++;
  }
  void free(std::int32_t id, std::int16_t phase = 0) {
    events.push_back({Op::free, 0, phase, -1, id, 1, 0});
  }
};

AllocatorConfig conf(std::string_view s) {
  auto c = parse_alloc_conf(s);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message());
  return c.ok() ? c.value() : AllocatorConfig{};
}

TEST(CachingAllocator, RoundingAndSegmentSizes) {
  const AllocatorConfig c;
  EXPECT_EQ(round_size(1, c), 512);
  EXPECT_EQ(round_size(512, c), 512);
  EXPECT_EQ(round_size(513, c), 1024);
  EXPECT_EQ(allocation_size(1 * MiB, c), 2 * MiB);         // small pool
  EXPECT_EQ(allocation_size(1 * MiB + 512, c), 20 * MiB);  // 1-10 MiB: a 20 MiB segment
  EXPECT_EQ(allocation_size(10 * MiB - 512, c), 20 * MiB);
  EXPECT_EQ(allocation_size(10 * MiB, c), 10 * MiB);  // from 10 MiB: rounded to 2 MiB
  EXPECT_EQ(allocation_size(10 * MiB + 512, c), 12 * MiB);
  // large_segment_size_mb:64 changes only the 1-10 MiB segments.
  const AllocatorConfig big = conf("large_segment_size_mb:64");
  EXPECT_EQ(allocation_size(1 * MiB, big), 2 * MiB);
  EXPECT_EQ(allocation_size(1 * MiB + 512, big), 64 * MiB);
  EXPECT_EQ(allocation_size(10 * MiB + 512, big), 12 * MiB);
  // roundup_power2_divisions:4 on 3 MiB + 1: interval [2, 4) MiB in steps of 512 KiB -> 3.5 MiB.
  EXPECT_EQ(round_size(3 * MiB + 1, conf("roundup_power2_divisions:4")), 3 * MiB + 512 * 1024);
  EXPECT_EQ(round_size(3 * MiB + 1, c), 3 * MiB + 512);
}

TEST(CachingAllocator, SmallPoolSplitsOneSegment) {
  Stream s;
  s.alloc(1000);  // 1,024 B from a new 2 MiB segment
  s.alloc(2000);  // 2,048 B split from the same segment's remainder
  const ReplayResult r = replay(s.events, {});
  EXPECT_EQ(r.peak_allocated_bytes, 1024 + 2048);
  EXPECT_EQ(r.peak_reserved_bytes, 2 * MiB);
  EXPECT_EQ(r.peak_requested_bytes, 3000);
  EXPECT_EQ(r.segments_allocated, 1);
  EXPECT_EQ(r.phases[0].largest_free_bytes, 2 * MiB - 3072);
}

TEST(CachingAllocator, LargePoolSplitsTwentyMiBSegment) {
  Stream s;
  s.alloc(3 * MiB);  // 20 MiB segment; 17 MiB remain (> 1 MiB) -> split
  s.alloc(5 * MiB);  // from the 17 MiB remainder
  const ReplayResult r = replay(s.events, {});
  EXPECT_EQ(r.peak_allocated_bytes, 8 * MiB);
  EXPECT_EQ(r.peak_reserved_bytes, 20 * MiB);
  EXPECT_EQ(r.phases[0].largest_free_bytes, 12 * MiB);
}

TEST(CachingAllocator, SmallAndLargePoolsDoNotShare) {
  Stream s;
  const auto a = s.alloc(3 * MiB);  // large pool: 20 MiB segment
  s.free(a);
  s.alloc(100 * 1024);  // small pool: cannot use the cached 20 MiB block -> 2 MiB segment
  const ReplayResult r = replay(s.events, {});
  EXPECT_EQ(r.peak_reserved_bytes, 22 * MiB);
  EXPECT_EQ(r.segments_allocated, 2);
}

TEST(CachingAllocator, ReusesFreedBlockWithoutSplittingSmallRemainder) {
  Stream s;
  const auto a = s.alloc(12 * MiB);  // its own 12 MiB segment
  s.free(a);
  s.alloc(11 * MiB);  // best fit: the cached 12 MiB block; 1 MiB left is not > 1 MiB: no split
  const ReplayResult r = replay(s.events, {});
  EXPECT_EQ(r.peak_reserved_bytes, 12 * MiB);
  EXPECT_EQ(r.phases[0].end_allocated_bytes, 12 * MiB);  // the slack counts as allocated
  EXPECT_EQ(r.segments_allocated, 1);
}

TEST(CachingAllocator, OversizeBlocksAreNotSplit) {
  Stream s;
  const auto a = s.alloc(40 * MiB);
  s.free(a);
  s.alloc(30 * MiB);  // below max_split: may not take the oversize 40 MiB block -> new segment
  s.alloc(39 * MiB);  // oversize request within 20 MiB of the cached block: takes it whole
  const ReplayResult r = replay(s.events, conf("max_split_size_mb:32"));
  EXPECT_EQ(r.peak_reserved_bytes, 70 * MiB);
  EXPECT_EQ(r.peak_allocated_bytes, 70 * MiB);

  // Unlimited (the default): the 30 MiB request splits the cached 40 MiB block.
  Stream d;
  const auto b = d.alloc(40 * MiB);
  d.free(b);
  d.alloc(30 * MiB);
  const ReplayResult u = replay(d.events, {});
  EXPECT_EQ(u.peak_reserved_bytes, 40 * MiB);
  EXPECT_EQ(u.phases[0].end_allocated_bytes, 30 * MiB);
  EXPECT_EQ(u.phases[0].largest_free_bytes, 10 * MiB);
}

TEST(CachingAllocator, OversizeRequestRefusesMuchLargerBlock) {
  Stream s;
  const auto a = s.alloc(80 * MiB);
  s.free(a);
  s.alloc(40 * MiB);  // >= max_split, but 80 >= 40 + 20: may not take it
  const ReplayResult r = replay(s.events, conf("max_split_size_mb:32"));
  EXPECT_EQ(r.peak_reserved_bytes, 120 * MiB);
}

// max_non_split_rounding_mb:64 lets the 40 MiB oversize request take the cached 80 MiB block
// whole (80 < 40 + 64), where the default 20 MiB refuses it (above): one segment, and the request
// holds all 80 MiB, since an oversize block is not split.
TEST(CachingAllocator, MaxNonSplitRoundingLetsAnOversizeRequestTakeALargerBlock) {
  Stream s;
  const auto a = s.alloc(80 * MiB);
  s.free(a);
  s.alloc(40 * MiB);
  const ReplayResult r =
      replay(s.events, conf("max_split_size_mb:32,max_non_split_rounding_mb:64"));
  EXPECT_EQ(r.peak_reserved_bytes, 80 * MiB);
  EXPECT_EQ(r.phases[0].end_allocated_bytes, 80 * MiB);
  EXPECT_EQ(r.segments_allocated, 1);
  // The largest setting PyTorch takes (it clamps at SIZE_MAX / 1 MiB): any oversize block serves.
  const ReplayResult any =
      replay(s.events, conf("max_split_size_mb:32,max_non_split_rounding_mb:99999999999999999"));
  EXPECT_EQ(any.peak_reserved_bytes, 80 * MiB);
}

// Four 9 MiB requests: with 20 MiB segments two fit a segment (9 + 9 leaves 2 MiB, too small for
// a third), so two segments, 40 MiB; with large_segment_size_mb:64 one segment holds all four
// (36 MiB), 64 MiB reserved.
TEST(CachingAllocator, LargeSegmentSizeSetsTheSegmentOfMidSizedRequests) {
  Stream s;
  for (int k = 0; k < 4; ++k) s.alloc(9 * MiB);
  const ReplayResult d = replay(s.events, {});
  EXPECT_EQ(d.peak_reserved_bytes, 40 * MiB);
  EXPECT_EQ(d.segments_allocated, 2);
  const ReplayResult big = replay(s.events, conf("large_segment_size_mb:64"));
  EXPECT_EQ(big.peak_reserved_bytes, 64 * MiB);
  EXPECT_EQ(big.segments_allocated, 1);
  EXPECT_EQ(big.peak_allocated_bytes, 36 * MiB);
}

TEST(CachingAllocator, BlocksAreNotReusedAcrossStreams) {
  Stream s;
  const auto a = s.alloc(3 * MiB, 0, 0);
  s.free(a);
  s.alloc(3 * MiB, 0, 1);
  const ReplayResult r = replay(s.events, {});
  EXPECT_EQ(r.peak_reserved_bytes, 40 * MiB);
}

TEST(CachingAllocator, ExpandableSegmentsGrowInGranules) {
  Stream s;
  s.alloc(3 * MiB);   // maps one 20 MiB granule; 17 MiB stay free after the split
  s.alloc(30 * MiB);  // 17 MiB free + one more granule mapped at the end: 37 MiB, split 30
  const ReplayResult e = replay(s.events, conf("expandable_segments:True"));
  EXPECT_EQ(e.peak_reserved_bytes, 40 * MiB);
  EXPECT_EQ(e.peak_allocated_bytes, 33 * MiB);
  EXPECT_EQ(e.phases[0].largest_free_bytes, 7 * MiB);
  // The same stream with fixed segments: 20 MiB + its own 30 MiB segment.
  const ReplayResult f = replay(s.events, {});
  EXPECT_EQ(f.peak_reserved_bytes, 50 * MiB);
}

// Expandable segments map the large pool in pages of large_segment_size: at 32 MiB, 3 MiB maps
// one page (29 MiB free after the split) and 30 MiB maps a second beside it: 64 MiB reserved.
TEST(CachingAllocator, ExpandableSegmentsMapPagesOfTheLargeSegmentSize) {
  Stream s;
  s.alloc(3 * MiB);
  s.alloc(30 * MiB);
  const ReplayResult e =
      replay(s.events, conf("expandable_segments:True,large_segment_size_mb:32"));
  EXPECT_EQ(e.peak_reserved_bytes, 64 * MiB);
  EXPECT_EQ(e.peak_allocated_bytes, 33 * MiB);
  EXPECT_EQ(e.phases[0].largest_free_bytes, 31 * MiB);
}

// A tensor that grows by concatenation (transformers' DynamicCache: `torch.cat([keys, new])`
// each generated token) allocates its next size while the last is live; from 10 MiB every
// request gets a segment rounded to 2 MiB, so each size class it outgrows stays cached, too small
// for the next. 12, 13, 14, 15 MiB one after another: segments of 12, 14, 14 and 16 MiB (13 and
// 15 MiB leave 1 MiB, not more than kSmallSize, so those blocks are not split and count whole),
// 56 MiB reserved for one 15 MiB tensor. Expandable segments map 20 MiB granules and reuse the
// freed range (12 at 0, 13 at 12 after a second granule, 14 at 25, 15 at 0): 40 MiB.
TEST(CachingAllocator, ConcatenationGrowthStrandsOutgrownSegments) {
  Stream s;
  std::int32_t live = s.alloc(12 * MiB);
  for (std::int64_t mib : {13, 14, 15}) {
    const std::int32_t next = s.alloc(mib * MiB);
    s.free(live);
    live = next;
  }
  const ReplayResult r = replay(s.events, {});
  EXPECT_EQ(r.peak_reserved_bytes, (12 + 14 + 14 + 16) * MiB);
  EXPECT_EQ(r.segments_allocated, 4);
  EXPECT_EQ(r.phases[0].end_allocated_bytes, 16 * MiB);
  EXPECT_EQ(r.phases[0].largest_free_bytes, 14 * MiB);
  const ReplayResult e = replay(s.events, conf("expandable_segments:True"));
  EXPECT_EQ(e.peak_reserved_bytes, 40 * MiB);
}

TEST(CachingAllocator, ExpandableSegmentSpansARequestBeyondItsReservation) {
  // Without a device limit the segment reserves 9/8 of 2^44 B; a request of 2^45 B (found by
  // replay_fuzz) gets a segment spanning it: mapped in 20 MiB granules, 2^45 is a multiple of 20
  // MiB only after rounding up: ceil(2^45 / 20 MiB) granules.
  Stream s;
  const std::int64_t big = std::int64_t{1} << 45;
  const std::int32_t a = s.alloc(big);
  s.free(a);
  s.alloc(3 * MiB);
  const ReplayResult e = replay(s.events, conf("expandable_segments:True"));
  const std::int64_t granules = (big + 20 * MiB - 1) / (20 * MiB);
  EXPECT_EQ(e.peak_allocated_bytes, big);
  EXPECT_EQ(e.peak_reserved_bytes, granules * 20 * MiB);
}

TEST(CachingAllocator, ExpandableSmallPoolMapsTwoMiBPages) {
  Stream s;
  // 5 x 700 KiB = 3,500 KiB of small blocks: packed into two 2 MiB pages.
  for (int i = 0; i < 5; ++i) s.alloc(700 * 1024);
  const ReplayResult e = replay(s.events, conf("expandable_segments:True"));
  EXPECT_EQ(e.peak_reserved_bytes, 4 * MiB);
  // Fixed 2 MiB segments hold two 700 KiB blocks each (648 KiB left over): three segments.
  const ReplayResult f = replay(s.events, {});
  EXPECT_EQ(f.peak_reserved_bytes, 6 * MiB);
  EXPECT_EQ(f.segments_allocated, 3);
}

TEST(CachingAllocator, GarbageCollectionFreesOldCachedBlocks) {
  Stream s;
  const auto a = s.alloc(40 * MiB);  // get_free_block call 1
  s.free(a);                         // cached at age base 1
  const auto b = s.alloc(50 * MiB);  // call 2: 40 < 50, reserved 40 <= 50 threshold: no GC
  s.free(b);                         // cached at base 2; reserved 90
  s.alloc(60 * MiB);  // call 3: GC (90 > 50): ages 2 and 1, mean 1.5 -> frees the 40 MiB block
  ReplayLimits lim;
  lim.allowed_bytes = 200 * MiB;  // threshold 0.25 x 200 MiB = 50 MiB
  const ReplayResult g = replay(s.events, conf("garbage_collection_threshold:0.25"), lim);
  EXPECT_EQ(g.peak_reserved_bytes, 110 * MiB);  // 90 + 60 is never held: 40 freed first
  EXPECT_EQ(g.phases[0].end_reserved_bytes, 110 * MiB);
  EXPECT_EQ(g.segments_released, 1);
  // Without a memory fraction the threshold does nothing (PyTorch's set_fraction test).
  const ReplayResult n = replay(s.events, conf("garbage_collection_threshold:0.25"));
  EXPECT_EQ(n.phases[0].end_reserved_bytes, 150 * MiB);
}

TEST(CachingAllocator, OutOfMemoryFreesCacheAndRetries) {
  Stream s;
  const auto a = s.alloc(40 * MiB);
  s.free(a);
  s.alloc(50 * MiB, 1);  // 40 cached + 50 > 60: free the cache, retry: fits
  s.alloc(20 * MiB, 1);  // 50 + 20 > 60 with nothing cached: out of memory
  ReplayLimits lim;
  lim.device_bytes = 60 * MiB;
  const ReplayResult r = replay(s.events, {}, lim);
  EXPECT_EQ(r.alloc_retries, 2);
  EXPECT_EQ(r.segments_released, 1);
  EXPECT_TRUE(r.oom);
  EXPECT_EQ(r.oom_event, 3);
  EXPECT_EQ(r.oom_request_bytes, 20 * MiB);
  EXPECT_EQ(r.oom_phase, 1);
  EXPECT_EQ(r.phases[1].end_reserved_bytes, 50 * MiB);
}

TEST(CachingAllocator, ExpandableOutOfMemoryUnmapsFreePages) {
  Stream s;
  const auto a = s.alloc(40 * MiB);  // two 20 MiB granules
  s.free(a);
  s.alloc(12 * MiB, 0, 1);  // another stream: its own segment; 40 + 20 > 50 -> unmap, retry
  ReplayLimits lim;
  lim.device_bytes = 50 * MiB;
  const ReplayResult r = replay(s.events, conf("expandable_segments:True"), lim);
  EXPECT_FALSE(r.oom);
  EXPECT_EQ(r.alloc_retries, 1);
  EXPECT_EQ(r.phases[0].end_reserved_bytes, 20 * MiB);
}

TEST(CachingAllocator, PerPhaseHighWaterAndPeaks) {
  Stream s;
  const auto a = s.alloc(4 * MiB, 0);
  const auto b = s.alloc(4 * MiB, 0);
  s.free(a, 1);
  s.free(b, 1);
  s.alloc(30 * MiB, 2);
  const ReplayResult r = replay(s.events, {});
  ASSERT_EQ(r.phases.size(), 3u);
  EXPECT_EQ(r.phases[0].allocated_bytes, 8 * MiB);
  EXPECT_EQ(r.phases[1].allocated_bytes, 8 * MiB);  // inherited from phase 0
  EXPECT_EQ(r.phases[1].end_allocated_bytes, 0);
  EXPECT_EQ(r.phases[1].largest_free_bytes, 20 * MiB);  // merged back into one segment
  EXPECT_EQ(r.phases[2].reserved_bytes, 50 * MiB);
  EXPECT_EQ(r.phases[2].peak_allocated_bytes, 30 * MiB);
  EXPECT_EQ(r.phases[1].peak_allocated_bytes, 8 * MiB);
}

TEST(CachingAllocator, CountedEventsAllocateOneBlockEach) {
  std::vector<AllocEvent> ev = {{Op::alloc, 0, 0, -1, 0, 3, 3 * MiB},
                                {Op::free, 0, 0, -1, 0, 1, 0}};
  const ReplayResult r = replay(ev, {});
  EXPECT_EQ(r.peak_allocated_bytes, 9 * MiB);
  EXPECT_EQ(r.peak_reserved_bytes, 20 * MiB);
  EXPECT_EQ(r.phases[0].end_allocated_bytes, 0);
}

TEST(AllocConf, ParsesKnownKeys) {
  const AllocatorConfig c = conf(
      "expandable_segments:True, max_split_size_mb:512,garbage_collection_threshold:0.6,"
      "roundup_power2_divisions:[256:1,512:2,>:8]");
  EXPECT_TRUE(c.expandable_segments);
  EXPECT_EQ(c.max_split_size_bytes, 512 * MiB);
  EXPECT_DOUBLE_EQ(c.garbage_collection_threshold, 0.6);
  EXPECT_EQ(c.roundup_power2_divisions[0], 1);
  EXPECT_EQ(c.roundup_power2_divisions[8], 1);
  EXPECT_EQ(c.roundup_power2_divisions[9], 2);
  EXPECT_EQ(c.roundup_power2_divisions[10], 8);
  EXPECT_EQ(c.roundup_power2_divisions[15], 8);
  EXPECT_FALSE(conf("").expandable_segments);
}

TEST(AllocConf, SegmentSizesAndKeysWithoutEffectOnDeviceMemory) {
  const AllocatorConfig big = conf("large_segment_size_mb:64");
  EXPECT_EQ(big.large_segment_size_bytes, 64 * MiB);
  EXPECT_EQ(big.max_non_split_rounding_bytes, 64 * MiB);  // its default follows
  const AllocatorConfig d = conf("");
  EXPECT_EQ(d.large_segment_size_bytes, 20 * MiB);
  EXPECT_EQ(d.max_non_split_rounding_bytes, 20 * MiB);
  EXPECT_EQ(conf("max_non_split_rounding_mb:40").max_non_split_rounding_bytes, 40 * MiB);
  // Host memory, locking, the OOM policy and virtual address space: accepted, nothing priced.
  const AllocatorConfig other = conf(
      "throw_on_cudamalloc_oom:True,pinned_use_background_threads:True,"
      "pinned_max_round_threshold_mb:64,pinned_max_cached_size_mb:64,pinned_free_catch_all:False,"
      "expandable_segments_reserve:0.5");
  EXPECT_EQ(other.large_segment_size_bytes, d.large_segment_size_bytes);
  EXPECT_EQ(other.max_split_size_bytes, d.max_split_size_bytes);
  EXPECT_FALSE(other.expandable_segments);
}

// PyTorch reads PYTORCH_ALLOC_CONF first since 2.9, then the older PYTORCH_CUDA_ALLOC_CONF.
TEST(AllocConf, TheEnvironmentVariablePyTorchReadsFirst) {
  const auto both = alloc_conf_from_environment([](const char* name) -> const char* {
    return std::string_view(name) == "PYTORCH_ALLOC_CONF" ? "expandable_segments:True"
                                                          : "max_split_size_mb:128";
  });
  ASSERT_TRUE(both);
  EXPECT_EQ(both->name, "PYTORCH_ALLOC_CONF");
  EXPECT_EQ(both->value, "expandable_segments:True");
  const auto old_name = alloc_conf_from_environment([](const char* name) -> const char* {
    return std::string_view(name) == "PYTORCH_CUDA_ALLOC_CONF" ? "max_split_size_mb:128" : nullptr;
  });
  ASSERT_TRUE(old_name);
  EXPECT_EQ(old_name->name, "PYTORCH_CUDA_ALLOC_CONF");
  EXPECT_FALSE(alloc_conf_from_environment([](const char*) -> const char* { return nullptr; }));
}

TEST(AllocConf, BadKeysAndValuesNameTheKey) {
  auto msg = [](std::string_view s) {
    auto c = parse_alloc_conf(s, "--alloc-conf");
    return c.ok() ? std::string("ok") : c.error().message();
  };
  EXPECT_NE(msg("expandable_segment:True").find("'expandable_segment': unknown key"),
            std::string::npos);
  EXPECT_NE(msg("expandable_segments:yes").find("expected True or False"), std::string::npos);
  EXPECT_NE(msg("max_split_size_mb:19").find("too small, must be >= 20"), std::string::npos);
  EXPECT_EQ(msg("max_split_size_mb:20"), "ok");  // torch >= 2.8 accepts the segment size itself
  // large_segment_size_mb is read first, wherever it stands, and raises the others' floor.
  EXPECT_NE(msg("max_split_size_mb:32,large_segment_size_mb:64")
                .find("'max_split_size_mb': too small, must be >= 64"),
            std::string::npos);
  EXPECT_NE(msg("max_non_split_rounding_mb:16").find("must be >= 20"), std::string::npos);
  EXPECT_NE(
      msg("large_segment_size_mb:10").find("'large_segment_size_mb': too small, must be > 10"),
      std::string::npos);
  EXPECT_NE(msg("large_segment_size_mb:99999999999").find("larger than any device"),
            std::string::npos);
  EXPECT_NE(msg("throw_on_cudamalloc_oom:maybe").find("expected True or False"), std::string::npos);
  EXPECT_NE(msg("pinned_max_cached_size_mb:0").find("positive integer"), std::string::npos);
  EXPECT_NE(msg("garbage_collection_threshold:1.5").find("between 0.0 and 1.0"), std::string::npos);
  EXPECT_NE(msg("roundup_power2_divisions:3").find("power of 2"), std::string::npos);
  EXPECT_NE(msg("max_split_size_mb").find("expected key:value"), std::string::npos);
  EXPECT_NE(msg("backend:magic").find("--alloc-conf"), std::string::npos);
}

}  // namespace
}  // namespace trainmem::gpu

namespace trainmem::gpu {
namespace {

void expect_same(const ReplayResult& a, const ReplayResult& b) {
  EXPECT_EQ(a.peak_allocated_bytes, b.peak_allocated_bytes);
  EXPECT_EQ(a.peak_reserved_bytes, b.peak_reserved_bytes);
  EXPECT_EQ(a.peak_requested_bytes, b.peak_requested_bytes);
  EXPECT_EQ(a.segments_allocated, b.segments_allocated);
  EXPECT_EQ(a.oom, b.oom);
  ASSERT_EQ(a.phases.size(), b.phases.size());
  for (std::size_t p = 0; p < a.phases.size(); ++p) {
    EXPECT_EQ(a.phases[p].allocated_bytes, b.phases[p].allocated_bytes) << p;
    EXPECT_EQ(a.phases[p].reserved_bytes, b.phases[p].reserved_bytes) << p;
    EXPECT_EQ(a.phases[p].largest_free_bytes, b.phases[p].largest_free_bytes) << p;
    EXPECT_EQ(a.phases[p].end_allocated_bytes, b.phases[p].end_allocated_bytes) << p;
  }
}

TEST(CachingAllocator, BulkLayoutEqualsOneByOne) {
  constexpr std::int64_t KiB = 1024;
  const std::int64_t sizes[] = {700 * KiB, 3 * MiB,      12 * MiB + 1, 1 * MiB + 512,
                                9 * MiB,   19 * MiB + 7, 256,          6 * MiB + 100};
  std::vector<AllocEvent> ev;
  std::int32_t id = 0;
  std::int16_t phase = 0;
  for (const std::int64_t bytes : sizes) {
    ev.push_back({Op::alloc, 0, phase, -1, id, 13, bytes});
    ev.push_back({Op::alloc, 0, phase, -1, id + 1, 1, bytes / 3 + 1});
    ev.push_back({Op::free, 0, phase, -1, id + 1, 1, 0});  // leaves a cached block behind
    ev.push_back({Op::alloc, 0, phase, -1, id + 2, 7, bytes});
    if (phase % 2 == 1) ev.push_back({Op::free, 0, phase, -1, id, 1, 0});
    id += 3;
    ++phase;
  }
  for (const char* c : {"", "max_split_size_mb:64", "roundup_power2_divisions:4"}) {
    SCOPED_TRACE(c);
    const AllocatorConfig cfg = conf(c);
    expect_same(replay(ev, cfg, {}, 0, true), replay(ev, cfg, {}, 0, false));
    ReplayLimits lim;
    lim.device_bytes = 300 * MiB;
    expect_same(replay(ev, cfg, lim, 0, true), replay(ev, cfg, lim, 0, false));
  }
}

}  // namespace
}  // namespace trainmem::gpu
