// The chunked free-block set against std::set, the structure it replaced in the allocator model:
// the same order (stream, size, address), the same lower_bound, erase of present and absent keys,
// replacement by a split remainder, and iteration both ways, over random operation sequences long
// enough to split and empty many chunks.
#include "gpu/free_block_set.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <tuple>
#include <vector>

namespace trainmem::gpu {
namespace {

using Ref = std::set<std::tuple<std::int32_t, std::int64_t, std::int64_t, std::int32_t>>;

std::tuple<std::int32_t, std::int64_t, std::int64_t, std::int32_t> tup(const FreeKey& k) {
  return {k.stream, k.size, k.addr, k.block};
}

void expect_equal(const FreeBlockSet& s, const Ref& ref) {
  ASSERT_EQ(s.size(), ref.size());
  std::vector<FreeKey> forward;
  for (const FreeKey& k : s) forward.push_back(k);
  ASSERT_EQ(forward.size(), ref.size());
  std::size_t n = 0;
  for (const auto& t : ref) EXPECT_EQ(tup(forward[n++]), t);
  // Backwards from end() visits the same entries in reverse.
  auto it = s.end();
  for (auto r = ref.rbegin(); r != ref.rend(); ++r) {
    --it;
    EXPECT_EQ(tup(*it), *r);
  }
  EXPECT_TRUE(it == s.begin());
}

TEST(FreeBlockSet, OrderIsStreamThenSizeThenAddress) {
  FreeBlockSet s;
  s.insert({4096, 100, 0, 1});
  s.insert({512, 900, 0, 2});
  s.insert({512, 300, 0, 3});
  s.insert({512, 0, 1, 4});  // another stream sorts after every block of stream 0
  std::vector<std::int32_t> blocks;
  for (const FreeKey& k : s) blocks.push_back(k.block);
  EXPECT_EQ(blocks, (std::vector<std::int32_t>{3, 2, 1, 4}));
  // Best fit for 1,000 B on stream 0: the 4,096 B block; for 512 B: the lower address.
  EXPECT_EQ(s.lower_bound(0, 1000)->block, 1);
  EXPECT_EQ(s.lower_bound(0, 512)->block, 3);
  EXPECT_EQ(s.lower_bound(0, 5000)->stream, 1);  // past stream 0: the caller checks the stream
  EXPECT_TRUE(s.lower_bound(1, 513) == s.end());
  s.erase({512, 300, 0, 7});  // same key, another block: absent, as in std::set
  EXPECT_EQ(s.size(), 4u);
  s.erase({512, 300, 0, 3});
  EXPECT_EQ(s.lower_bound(0, 512)->block, 2);
}

TEST(FreeBlockSet, MatchesStdSetOnRandomOperations) {
  std::mt19937_64 rng(12345);
  for (int round = 0; round < 4; ++round) {
    FreeBlockSet s;
    Ref ref;
    std::vector<FreeKey> live;
    // Few distinct sizes and streams, as in the allocator: many equal sizes. Each block owns the
    // address range [addr, addr + size), as a real block does, so no two share an address even
    // after splits.
    const std::int64_t sizes = round % 2 == 0 ? 7 : 4000;
    std::int64_t next_addr = 0;
    for (int op = 0; op < 20000; ++op) {
      const auto pick = rng() % 10;
      if (pick < 5 || live.empty()) {
        const std::int64_t size = 512 * static_cast<std::int64_t>(1 + rng() % sizes);
        const FreeKey k{size, next_addr, static_cast<std::int32_t>(rng() % 3), op};
        next_addr += size;
        s.insert(k);
        ref.insert(tup(k));
        live.push_back(k);
      } else if (pick < 8) {
        const std::size_t at = rng() % live.size();
        s.erase(live[at]);
        ref.erase(tup(live[at]));
        live[at] = live.back();
        live.pop_back();
      } else if (pick < 9) {
        // Erase at a lower_bound, as get_free_block does.
        const auto stream = static_cast<std::int32_t>(rng() % 3);
        const std::int64_t size = 512 * static_cast<std::int64_t>(rng() % (sizes + 1));
        const auto it = s.lower_bound(stream, size);
        const auto want = ref.lower_bound({stream, size, -1, -1});
        ASSERT_EQ(it == s.end(), want == ref.end());
        if (want == ref.end()) continue;
        ASSERT_EQ(tup(*it), *want);
        const FreeKey k = *it;
        s.erase(it);
        ref.erase(want);
        std::erase_if(live, [&](const FreeKey& l) { return l.block == k.block; });
      } else if (pick < 10 && rng() % 2 == 0) {
        s.erase({512, -1, 0, -1});  // never present
      } else {
        // Split from the front, as alloc_found_block does: smaller size, higher address.
        const auto stream = static_cast<std::int32_t>(rng() % 3);
        const std::int64_t size = 512 * static_cast<std::int64_t>(rng() % (sizes + 1));
        const auto it = s.lower_bound(stream, size);
        if (it == s.end() || it->size <= 512) continue;
        const FreeKey old = *it;
        const std::int64_t cut = 512 * static_cast<std::int64_t>(1 + rng() % (old.size / 512 - 1));
        const FreeKey rest{old.size - cut, old.addr + cut, old.stream, old.block};
        s.replace(it, rest);
        ref.erase(tup(old));
        ref.insert(tup(rest));
        for (FreeKey& l : live) {
          if (l.block == old.block) l = rest;
        }
      }
      if (op % 2500 == 0) expect_equal(s, ref);
    }
    expect_equal(s, ref);
    // Drain: every chunk empties and is dropped.
    for (const FreeKey& k : live) s.erase(k);
    EXPECT_TRUE(s.empty());
    EXPECT_TRUE(s.begin() == s.end());
  }
}

}  // namespace
}  // namespace trainmem::gpu
