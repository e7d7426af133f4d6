// User device files (--devices FILE): rows in the schema of data/devices/gpus.json, checked key by
// key; rows added to the database or replacing a built-in by id. And the issue-11 cards.
#include <gtest/gtest.h>

#include <string>

#include "trainmem/device.h"
#include "trainmem/render.h"

namespace trainmem {
namespace {

// Restores the built-in list after each test: use_user_devices is process-wide.
class UserDevices : public ::testing::Test {
 protected:
  void TearDown() override { use_user_devices({}); }
};

std::string reason_of(std::string_view text) {
  auto r = parse_device_file(text, "my.json");
  EXPECT_FALSE(r.ok());
  return r.ok() ? std::string() : r.error().message();
}

TEST(DeviceFile, ReadsRowsInTheBuiltInSchema) {
  auto r = parse_device_file(R"({"devices": [
    {"id": "Lab A6000", "name": "NVIDIA RTX A6000", "total_mib": 49140, "compute_capability": "8.6"},
    {"id": "box", "kind": "unified", "total_gb": 64, "gpu_share": 0.75, "bf16": false},
    {"id": "card", "total_mib": 8192, "reserve_mib": 512, "aliases": ["My Card"], "note": "n"}]})",
                             "my.json");
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->size(), 3U);
  const Device& a = r->at(0);
  EXPECT_EQ(a.id, "lab-a6000");        // ids compare as typed names do
  EXPECT_EQ(a.kind, DeviceKind::gpu);  // the default kind
  EXPECT_EQ(a.capacity_bytes, 49140 * kMiB);
  // No reserve given: max(1 GiB, 2% of 49140 MiB rounded up to a MiB) = 983 MiB < 1 GiB.
  EXPECT_EQ(a.reserve_bytes, kGiB);
  EXPECT_TRUE(a.bf16);
  const Device& box = r->at(1);
  EXPECT_EQ(box.capacity_bytes, 64 * kGB);
  // 75% of 64e9 B rounded down to a MiB: 45,776 MiB = 47,999,221,760 B usable.
  EXPECT_EQ(box.usable_bytes(), 45776 * kMiB);
  EXPECT_FALSE(box.bf16);
  const Device& card = r->at(2);
  EXPECT_EQ(card.reserve_bytes, 512 * kMiB);
  ASSERT_EQ(card.aliases.size(), 1U);
  EXPECT_EQ(card.aliases[0], "my-card");
  // A bare list is read too.
  auto bare = parse_device_file(R"([{"id": "x", "total_mib": 16384}])", "b.json");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->at(0).capacity_bytes, 16 * kGiB);
}

TEST(DeviceFile, EachBadRowNamesTheRowTheFieldAndTheReason) {
  EXPECT_EQ(reason_of(R"({"devices": [{"id": "x", "total_mib": 8192}, {"id": "y"}]})"),
            "my.json: devices[1].total_mib: is missing: give the capacity as total_mib (what "
            "nvidia-smi --query-gpu=memory.total prints) or total_gb");
  EXPECT_EQ(reason_of(R"({"devices": [{"id": "x", "total_MiB": 24576}]})"),
            "my.json: devices[0].total_MiB: is not a device field; did you mean total_mib?; "
            "fields: id, name, kind, total_mib, total_gb, reserve_mib, reserve_gb, gpu_share, "
            "bf16, aliases, compute_capability, note");
  EXPECT_NE(reason_of(R"({"devices": [{"id": "x", "total_mib": "24GB"}]})")
                .find("devices[0].total_mib: must be a whole number of MiB"),
            std::string::npos);
  EXPECT_NE(reason_of(R"({"devices": [{"id": "x", "total_mib": 24576.5}]})").find("got 24576.5"),
            std::string::npos);
  EXPECT_NE(reason_of(R"({"devices": [{"id": "x", "total_mib": -1}]})").find("from 1 to"),
            std::string::npos);
  EXPECT_NE(reason_of(R"({"devices": [{"id": "x", "total_mib": 99999999999999999999}]})")
                .find("devices[0].total_mib"),
            std::string::npos);
  EXPECT_NE(
      reason_of(R"({"devices": [{"id": "x", "total_mib": 1, "total_gb": 1}]})").find("not both"),
      std::string::npos);
  EXPECT_NE(reason_of(R"({"devices": [{"id": "x", "total_mib": 1024, "reserve_mib": 1024}]})")
                .find("devices[0].reserve_mib: keeps back 1024.00 MiB of the device's 1024.00 "
                      "MiB"),
            std::string::npos);
  EXPECT_NE(reason_of(R"({"devices": [{"id": "x", "total_mib": 8192, "bf16": "yes"}]})")
                .find("devices[0].bf16: must be true or false"),
            std::string::npos);
  EXPECT_NE(reason_of(R"({"devices": [{"id": "x", "total_mib": 1024, "kind": "tpu"}]})")
                .find("devices[0].kind: 'tpu' is not one of: gpu, unified, tier"),
            std::string::npos);
  EXPECT_NE(
      reason_of(R"({"devices": [{"id": "", "total_mib": 1024}]})").find("devices[0].id: is empty"),
      std::string::npos);
  EXPECT_NE(
      reason_of(R"({"devices": [{"id": "a", "total_mib": 8192}, {"id": "A", "total_mib": 8192}]})")
          .find("devices[1].id: 'a' is also the id of devices[0]"),
      std::string::npos);
  EXPECT_NE(reason_of(R"({"devices": [{"id": "x", "total_mib": 8192, "aliases": "x2"}]})")
                .find("devices[0].aliases: must be a list"),
            std::string::npos);
  EXPECT_NE(reason_of(R"({"devices": [{"id": "x", "total_gb": 8, "gpu_share": 1.5}]})")
                .find("devices[0].gpu_share"),
            std::string::npos);
  // The flash-attention check reads compute_capability: a CUDA major.minor or an AMD gfx name.
  EXPECT_NE(
      reason_of(R"({"devices": [{"id": "x", "total_mib": 8192, "compute_capability": "abc"}]})")
          .find("devices[0].compute_capability: must be a CUDA compute capability such as "
                "\"8.9\" or an AMD architecture such as \"gfx942\", got \"abc\""),
      std::string::npos);
  for (const char* bad : {"8", "8.", ".9", "8.9.1", "gfx", "gfxzz"}) {
    const std::string row =
        std::string(R"({"devices": [{"id": "x", "total_mib": 8192, "compute_capability": ")") +
        bad + R"("}]})";
    EXPECT_NE(reason_of(row).find("compute_capability"), std::string::npos) << bad;
  }
  EXPECT_TRUE(parse_device_file(R"({"devices": [{"id": "x", "total_mib": 8192,
    "compute_capability": "gfx90a"}, {"id": "y", "total_mib": 8192, "compute_capability": "12.0"}]})",
                                "my.json")
                  .ok());
  EXPECT_NE(reason_of(R"({"gpus": []})").find("my.json: devices: is missing"), std::string::npos);
  EXPECT_NE(reason_of(R"({"devices": []})").find("lists no devices"), std::string::npos);
  EXPECT_NE(reason_of(R"({"devices": [7]})").find("devices[0]: must be an object"),
            std::string::npos);
  EXPECT_NE(reason_of("{\"devices\": [").find("my.json"), std::string::npos);
}

TEST_F(UserDevices, RowsAreAddedAndReplaceBuiltInsById) {
  const std::int64_t builtin = find_device("rtx-4090")->capacity_bytes;
  const std::size_t count = list_devices().size();
  auto rows = parse_device_file(R"({"devices": [
    {"id": "rtx-4090", "name": "NVIDIA GeForce RTX 4090", "total_mib": 24000},
    {"id": "lab-card", "name": "Lab Card X", "total_mib": 12000, "aliases": ["3090"]}]})",
                                "u.json");
  ASSERT_TRUE(rows.ok()) << rows.error().message();
  use_user_devices(rows.value());
  EXPECT_EQ(list_devices().size(), count + 1);  // one replaced, one added
  EXPECT_EQ(find_device("rtx-4090")->capacity_bytes, 24000 * kMiB);
  EXPECT_NE(find_device("rtx-4090")->capacity_bytes, builtin);
  EXPECT_EQ(find_device("NVIDIA GeForce RTX 4090")->capacity_bytes, 24000 * kMiB);
  EXPECT_EQ(find_device("lab card")->id, "lab-card");
  EXPECT_EQ(find_device("Lab Card X")->id, "lab-card");  // by its name, as nvidia-smi prints it
  EXPECT_EQ(find_device("3090")->id, "lab-card");        // a user alias is matched first
  EXPECT_EQ(find_device("rtx-3090")->id, "rtx-3090");    // built-in ids still resolve
  use_user_devices({});
  EXPECT_EQ(find_device("rtx-4090")->capacity_bytes, builtin);
  EXPECT_FALSE(find_device("lab-card").ok());
}

// Issue 11's cards, with nvidia-smi's memory.total (data/devices/gpus.json notes give sources).
TEST(Devices, IssueElevenCardsWithDriverTotals) {
  struct Card {
    const char* typed;  // as a user types it: id, alias or nvidia-smi name
    const char* id;
    std::int64_t mib;
    bool bf16;
  };
  for (const Card& c :
       {Card{"NVIDIA A10G", "a10g", 23028, true}, Card{"NVIDIA L4", "l4", 23034, true},
        Card{"4060-ti-16gb", "rtx-4060-ti-16gb", 16380, true},
        Card{"3080", "rtx-3080", 10240, true},
        Card{"NVIDIA GeForce RTX 3090", "rtx-3090", 24576, true},
        Card{"Tesla P100-PCIE-16GB", "p100-16gb", 16280, false},
        Card{"p100", "p100-16gb", 16280, false},
        Card{"AMD Instinct MI300X", "mi300x", 196592, true},
        Card{"AMD Instinct MI300X VF", "mi300x-vf", 196288, true}}) {
    SCOPED_TRACE(c.typed);
    auto d = find_device(c.typed);
    ASSERT_TRUE(d.ok()) << d.error().message();
    EXPECT_EQ(d->id, c.id);
    EXPECT_EQ(d->capacity_bytes, c.mib * kMiB);
    EXPECT_EQ(d->bf16, c.bf16);
  }
  EXPECT_EQ(find_device("p100")->compute_capability, "6.0");  // no FlashAttention-2 (needs 8.0)
}

// nvidia-smi prints one name for both memory sizes of these cards: refused, not guessed.
TEST(Devices, ANameSharedBySizesIsRefusedWithTheIds) {
  for (const char* name :
       {"NVIDIA GeForce RTX 3080", "NVIDIA GeForce RTX 4060 Ti", "NVIDIA GeForce RTX 3060"}) {
    SCOPED_TRACE(name);
    auto d = find_device(name);
    ASSERT_FALSE(d.ok());
    EXPECT_NE(d.error().reason.find("more than one memory size"), std::string::npos)
        << d.error().reason;
  }
  EXPECT_NE(find_device("NVIDIA GeForce RTX 3080")
                .error()
                .reason.find("rtx-3080 (10 GB), rtx-3080-12gb (12 GB)"),
            std::string::npos);
  EXPECT_EQ(find_device("rtx-4060-ti-8gb")->capacity_bytes, 8188 * kMiB);
  EXPECT_EQ(find_device("NVIDIA H100 NVL")->id, "h100-nvl");  // one size: its name resolves
  EXPECT_EQ(find_device("3080-12gb")->capacity_bytes, 12288 * kMiB);
}

}  // namespace
}  // namespace trainmem
