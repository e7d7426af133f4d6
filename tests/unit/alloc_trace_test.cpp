// The traced-stream reader (gpu/alloc_trace.h) and a hand-worked replay of a small trace.
#include "gpu/alloc_trace.h"

#include <gtest/gtest.h>

#include "gpu/caching_allocator.h"

namespace trainmem::gpu {
namespace {

constexpr std::int64_t MiB = std::int64_t{1} << 20;

TEST(AllocTrace, AHandWorkedTraceReplays) {
  // Three 6 MiB tensors carve one 20 MiB segment (requests of 1-10 MiB; 2 MiB stay free). The
  // middle one is freed: a 6 MiB hole. An 8 MiB tensor fits neither the hole nor the 2 MiB tail,
  // so a second 20 MiB segment is cut: 40 MiB reserved for 20 MiB allocated.
  const std::string text = R"({"schema": "trainmem.alloc-trace/1", "phases": ["a", "b"],
    "events": [["a", 1, 6291456, 0], ["a", 2, 6291456, 0], ["a", 3, 6291456, 0],
               ["f", 2, 0, 1], ["a", 4, 8388608, 1]]})";
  auto trace = parse_alloc_trace(text, "t.json");
  ASSERT_TRUE(trace) << trace.error().message();
  ASSERT_EQ(trace->events.size(), 5u);
  const ReplayResult r = replay(trace->events, parse_alloc_conf("").value(), {}, 2, false);
  EXPECT_EQ(r.phases[0].allocated_bytes, 18 * MiB);
  EXPECT_EQ(r.phases[0].reserved_bytes, 20 * MiB);
  EXPECT_EQ(r.phases[1].allocated_bytes, 20 * MiB);
  EXPECT_EQ(r.phases[1].reserved_bytes, 40 * MiB);
  EXPECT_EQ(r.segments_allocated, 2);
  // A workspace added where a phase begins comes before that phase's first event.
  add_allocation_at(trace.value(), "b", 32 * MiB);
  ASSERT_EQ(trace->events.size(), 6u);
  EXPECT_EQ(trace->events[3].bytes, 32 * MiB);
  EXPECT_EQ(trace->events[3].op, Op::alloc);
  EXPECT_EQ(trace->events[3].id, 5);
}

TEST(AllocTrace, BadTracesNameTheEvent) {
  const auto error = [](const std::string& events) {
    auto t = parse_alloc_trace(
        R"({"schema": "trainmem.alloc-trace/1", "phases": ["a"], "events": )" + events + "}",
        "t.json");
    return t ? std::string() : t.error().message();
  };
  EXPECT_NE(error(R"([["f", 1, 0, 0]])").find("events[0]: frees id 1"), std::string::npos);
  EXPECT_NE(error(R"([["a", 1, 8, 0], ["a", 1, 8, 0]])").find("events[1]: id 1 is allocated"),
            std::string::npos);
  EXPECT_NE(error(R"([["a", 1, 8, 3]])").find("phase 3"), std::string::npos);
  EXPECT_NE(error(R"([["a", 1, -8, 0]])").find("size -8"), std::string::npos);
  EXPECT_NE(error(R"([["x", 1, 8, 0]])").find("op 'x'"), std::string::npos);
  EXPECT_NE(error(R"([["a", 1]])").find("events[0]"), std::string::npos);
  EXPECT_EQ(error(R"([])"), "");  // an empty trace is a trace
  EXPECT_FALSE(parse_alloc_trace(R"({"phases": []})", "t.json"));
  EXPECT_FALSE(parse_alloc_trace(R"({"schema": 7, "phases": [], "events": []})", "t.json"));
  EXPECT_FALSE(parse_alloc_trace(R"([1, 2])", "t.json"));
}

}  // namespace
}  // namespace trainmem::gpu
