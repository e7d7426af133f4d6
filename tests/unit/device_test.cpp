// The device database: every entry sane, ids unique, lookups by id and alias, suggestions.
#include "trainmem/device.h"

#include <gtest/gtest.h>

#include <set>

#include "trainmem/render.h"

namespace trainmem {
namespace {

TEST(Devices, EveryEntryIsSane) {
  const std::vector<Device> all = list_devices();
  ASSERT_GT(all.size(), 40U);
  std::set<std::string> ids;
  for (const Device& d : all) {
    SCOPED_TRACE(d.id);
    EXPECT_TRUE(ids.insert(d.id).second) << "duplicate id";
    for (char c : d.id) {
      EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-') << d.id;
    }
    EXPECT_FALSE(d.name.empty());
    EXPECT_NE(d.kind, DeviceKind::custom);
    EXPECT_GE(d.capacity_bytes, 7 * kGiB);
    EXPECT_LE(d.capacity_bytes, 600 * kGiB);
    EXPECT_GT(d.reserve_bytes, 0);
    EXPECT_LT(d.reserve_bytes, d.capacity_bytes / 2);
    EXPECT_EQ(d.usable_bytes(), d.capacity_bytes - d.reserve_bytes);
    EXPECT_FALSE(d.reserve_rule.empty());
    EXPECT_FALSE(d.note.empty());
    if (d.kind == DeviceKind::gpu) {
      EXPECT_EQ(d.capacity_bytes % kMiB, 0) << "GPUs are stored in MiB as nvidia-smi shows them";
      EXPECT_FALSE(d.compute_capability.empty());
      // Native bf16 is compute capability >= 8.0 (ecosystem.md 3.3).
      if (d.compute_capability.find('.') != std::string::npos) {
        EXPECT_EQ(d.bf16, std::stod(d.compute_capability) >= 8.0);
      }
    }
  }
  // Sorted by capacity.
  for (std::size_t i = 1; i < all.size(); ++i) {
    EXPECT_LE(all[i - 1].capacity_bytes, all[i].capacity_bytes);
  }
  // Aliases do not collide with ids or each other.
  std::set<std::string> aliases;
  for (const Device& d : all) {
    for (const std::string& a : d.aliases) {
      EXPECT_EQ(ids.count(a), 0U) << a;
      EXPECT_TRUE(aliases.insert(a).second) << a;
    }
  }
}

TEST(Devices, DriverFiguresAsNvidiaSmiShowsThem) {
  EXPECT_EQ(find_device("rtx-4090")->capacity_bytes, 24564 * kMiB);
  EXPECT_EQ(find_device("a100-80gb")->capacity_bytes, 81920 * kMiB);
  EXPECT_EQ(find_device("h100-sxm")->capacity_bytes, 81559 * kMiB);
  EXPECT_EQ(find_device("h200")->capacity_bytes, 143771 * kMiB);
  EXPECT_FALSE(find_device("t4")->bf16);
  EXPECT_FALSE(find_device("v100-16gb")->bf16);
  EXPECT_TRUE(find_device("l4")->bf16);
}

TEST(Devices, DefaultGpuReserveIsOneGibOrTwoPercent) {
  EXPECT_EQ(default_gpu_reserve(24564 * kMiB), kGiB);
  const std::int64_t h200 = 143771 * kMiB;
  EXPECT_GE(default_gpu_reserve(h200), h200 / 50);
  EXPECT_LT(default_gpu_reserve(h200), h200 / 50 + kMiB);
  EXPECT_EQ(find_device("rtx-4090")->reserve_bytes, kGiB);
}

TEST(Devices, TiersAreDecimalGbWithTheSeedsReserve) {
  const auto t32 = find_device("tier-32gb");
  ASSERT_TRUE(t32);
  EXPECT_EQ(t32->kind, DeviceKind::tier);
  EXPECT_EQ(t32->capacity_bytes, 32 * kGB);
  EXPECT_NEAR(in_unit(t32->capacity_bytes, Unit::gib), 29.80, 0.005);  // "29.8 GiB"
  EXPECT_EQ(t32->reserve_bytes, 2 * kGB);
  // A range tier's capacity is its upper bound.
  EXPECT_EQ(find_device("tier-12-16gb")->capacity_bytes, 16 * kGB);
  EXPECT_EQ(find_device("tier-48-64gb")->capacity_bytes, 64 * kGB);
  int tiers = 0;
  for (const Device& d : list_devices()) tiers += d.kind == DeviceKind::tier;
  EXPECT_EQ(tiers, 7);
}

TEST(Devices, AppleUnifiedMemoryKeepsTheWorkingSetCap) {
  const auto m = find_device("m3-max-64gb");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->kind, DeviceKind::unified);
  EXPECT_EQ(m->capacity_bytes, 64 * kGiB);
  EXPECT_EQ(m->usable_bytes(), 48 * kGiB);  // ~75% recommendedMaxWorkingSetSize
  EXPECT_FALSE(find_device("m1-max-64gb")->bf16);
  EXPECT_TRUE(find_device("m2-ultra-192gb")->bf16);
}

TEST(Devices, LookupIsCaseInsensitiveAndTakesAliases) {
  EXPECT_EQ(find_device("RTX-4090")->id, "rtx-4090");
  EXPECT_EQ(find_device("rtx 4090")->id, "rtx-4090");
  EXPECT_EQ(find_device("rtx_4090")->id, "rtx-4090");
  EXPECT_EQ(find_device("4090")->id, "rtx-4090");
  // nvidia-smi's PCIe names are aliases of the SXM cards of the same memory.
  EXPECT_EQ(find_device("NVIDIA A100-PCIE-40GB")->id, "a100-40gb");
  EXPECT_EQ(find_device("NVIDIA A100 80GB PCIe")->id, "a100-80gb");
  // A bare "a100" is sold in 40 and 80 GB: refused with both, never priced as one of them.
  const auto a100 = find_device("a100");
  ASSERT_FALSE(a100);
  EXPECT_NE(a100.error().reason.find("a100-40gb"), std::string::npos) << a100.error().reason;
  EXPECT_NE(a100.error().reason.find("a100-80gb"), std::string::npos) << a100.error().reason;
}

TEST(Devices, UnknownNamesSuggestTheNearest) {
  const auto r = find_device("rtx4090");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::not_found);
  EXPECT_NE(r.error().reason.find("rtx-4090"), std::string::npos) << r.error().reason;
  EXPECT_EQ(nearest_devices("h100sxm").front(), "h100-sxm");
  EXPECT_EQ(nearest_devices("m3-max-64").front(), "m3-max-64gb");
  EXPECT_TRUE(nearest_devices("completely-unrelated-accelerator-name").empty());
}

// A known name with its memory size resolves when the size is the card's, read as GiB or as
// decimal GB within 5 %: the H100's 81,559 MiB is 79.65 GiB ("80GB"), the H200's 143,771 MiB is
// 140.40 GiB ("141GB"), the B200's 183,359 MiB is 192.27 GB ("192GB", 179.06 GiB).
TEST(Devices, NameWithItsMemorySizeResolves) {
  EXPECT_EQ(find_device("h100-80gb")->id, "h100-sxm");
  EXPECT_EQ(find_device("H100 80GB")->id, "h100-sxm");
  EXPECT_EQ(find_device("h100-pcie-80gb")->id, "h100-pcie");
  EXPECT_EQ(find_device("rtx-4090-24gb")->id, "rtx-4090");
  EXPECT_EQ(find_device("h200-141gb")->id, "h200");
  EXPECT_EQ(find_device("b200-192gb")->id, "b200");
  EXPECT_EQ(find_device("3080-10gb")->id, "rtx-3080");
  // nvidia-smi's one name for the RTX 3080's two sizes, with the size: the row of that size.
  EXPECT_EQ(find_device("NVIDIA GeForce RTX 3080 12GB")->id, "rtx-3080-12gb");
  EXPECT_EQ(find_device("NVIDIA GeForce RTX 3080 10GB")->id, "rtx-3080");
}

// A size that is not the card's is refused, not priced at the card's capacity: a 48 GB modified
// RTX 4090 (23.99 GiB, 25.76 GB: 48 is neither within 5 %), the 94 GB H100 NVL under the H100's
// alias.
TEST(Devices, NameWithAnotherMemorySizeIsRefused) {
  const auto modded = find_device("rtx-4090-48gb");
  ASSERT_FALSE(modded);
  EXPECT_NE(modded.error().reason.find("no 48 GB device"), std::string::npos)
      << modded.error().reason;
  EXPECT_NE(modded.error().reason.find("23.99 GiB"), std::string::npos) << modded.error().reason;
  const auto nvl = find_device("h100-94gb");
  ASSERT_FALSE(nvl);
  EXPECT_NE(nvl.error().reason.find("h100-sxm"), std::string::npos) << nvl.error().reason;
  const auto rtx3080 = find_device("NVIDIA GeForce RTX 3080 16GB");
  ASSERT_FALSE(rtx3080);
  EXPECT_NE(rtx3080.error().reason.find("rtx-3080-12gb"), std::string::npos)
      << rtx3080.error().reason;
  // Not a size suffix: an unknown name stays unknown.
  EXPECT_FALSE(find_device("gb"));
  EXPECT_FALSE(find_device("-80gb"));
  EXPECT_FALSE(find_device("h100-123456gb"));
}

// --reserve replaces the device's own reserve, and its rule says so; a reserve that leaves no
// usable memory is refused: 24 GB - 4 GB = 20 GB usable; 8 GB - 16 GB is nothing.
TEST(Devices, ReserveReplacesTheRuleAndMustLeaveMemory) {
  const auto d = with_reserve(custom_device(24 * kGB), 4 * kGB);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->usable_bytes(), 20 * kGB);
  EXPECT_EQ(d->reserve_rule, "--reserve");
  const auto none = with_reserve(custom_device(8 * kGB), 16 * kGB);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().field, "--reserve");
  EXPECT_NE(none.error().reason.find("leaves nothing"), std::string::npos) << none.error().reason;
}

TEST(Devices, CustomDeviceHasNoReserve) {
  const Device d = custom_device(32 * kGB);
  EXPECT_EQ(d.capacity_bytes, 32 * kGB);
  EXPECT_EQ(d.reserve_bytes, 0);
  EXPECT_EQ(d.kind, DeviceKind::custom);
}

}  // namespace
}  // namespace trainmem
