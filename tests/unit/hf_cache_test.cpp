// Offline Hugging Face cache resolution against a fake cache tree in a temp folder.
#include "io/hf_cache.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "support/safetensors_writer.h"

namespace trainmem::io {
namespace {

namespace fs = std::filesystem;
using testing::ScopedEnv;
using testing::TempDir;
using testing::write_bytes;

const std::string kCommitA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const std::string kCommitB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

class HfCache : public ::testing::Test {
 protected:
  // Every variable the lookup reads starts unset; each is restored after the test.
  HfCache() {
    for (const char* name :
         {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME", "HOME"}) {
      env_.push_back(std::make_unique<ScopedEnv>(name, nullptr));
    }
  }

  // A snapshot of `repo` ("org/name") under `hub`, with or without a config.json.
  static fs::path add_snapshot(const fs::path& hub, const std::string& repo,
                               const std::string& commit, bool with_config = true) {
    std::string folder = "models--" + repo;
    folder.replace(folder.find('/'), 1, "--");
    const fs::path snapshot = hub / folder / "snapshots" / commit;
    fs::create_directories(snapshot);
    if (with_config) write_bytes(snapshot / "config.json", "{}");
    return snapshot;
  }

  static void add_ref(const fs::path& hub, const std::string& repo, const std::string& ref,
                      const std::string& commit) {
    std::string folder = "models--" + repo;
    folder.replace(folder.find('/'), 1, "--");
    write_bytes(hub / folder / "refs" / ref, commit);  // no trailing newline, as the hub writes
  }

  void set(const char* name, const fs::path& value) {
    env_.push_back(std::make_unique<ScopedEnv>(name, value.c_str()));
  }

  TempDir dir_;
  std::vector<std::unique_ptr<ScopedEnv>> env_;
};

TEST_F(HfCache, HubCacheVariableAndRefsMain) {
  const fs::path hub = dir_.path() / "hub";
  add_snapshot(hub, "Qwen/Qwen3-8B", kCommitA);
  const fs::path b = add_snapshot(hub, "Qwen/Qwen3-8B", kCommitB);
  add_ref(hub, "Qwen/Qwen3-8B", "main", kCommitB + "\n");
  set("HF_HUB_CACHE", hub);
  EXPECT_EQ(find_hf_cache_snapshot("Qwen/Qwen3-8B"), b);
}

TEST_F(HfCache, HubCacheBeatsHfHome) {
  const fs::path hub = dir_.path() / "direct";
  const fs::path snapshot = add_snapshot(hub, "org/m", kCommitA);
  add_snapshot(dir_.path() / "home" / "hub", "org/m", kCommitB);
  set("HF_HOME", dir_.path() / "home");
  set("HF_HUB_CACHE", hub);
  EXPECT_EQ(find_hf_cache_snapshot("org/m"), snapshot);
}

TEST_F(HfCache, HfHomeHub) {
  const fs::path snapshot = add_snapshot(dir_.path() / "home" / "hub", "org/m", kCommitA);
  set("HF_HOME", dir_.path() / "home");
  EXPECT_EQ(find_hf_cache_snapshot("org/m"), snapshot);
}

TEST_F(HfCache, DefaultUnderHome) {
  const fs::path hub = dir_.path() / ".cache" / "huggingface" / "hub";
  const fs::path snapshot = add_snapshot(hub, "org/m", kCommitA);
  set("HOME", dir_.path());
  EXPECT_EQ(hf_cache_root(), hub);
  EXPECT_EQ(find_hf_cache_snapshot("org/m"), snapshot);
}

TEST_F(HfCache, EmptyVariableCountsAsUnset) {
  const fs::path snapshot = add_snapshot(dir_.path() / "home" / "hub", "org/m", kCommitA);
  set("HF_HUB_CACHE", "");
  set("HF_HOME", dir_.path() / "home");
  EXPECT_EQ(find_hf_cache_snapshot("org/m"), snapshot);
}

TEST_F(HfCache, WithoutRefsTakesTheOnlySnapshot) {
  const fs::path snapshot = add_snapshot(dir_.path(), "org/m", kCommitA);
  set("HF_HUB_CACHE", dir_.path());
  EXPECT_EQ(find_hf_cache_snapshot("org/m"), snapshot);
}

TEST_F(HfCache, WithoutRefsTakesTheNewestSnapshot) {
  const fs::path a = add_snapshot(dir_.path(), "org/m", kCommitA);
  const fs::path b = add_snapshot(dir_.path(), "org/m", kCommitB);
  const auto now = fs::file_time_type::clock::now();
  fs::last_write_time(a, now);
  fs::last_write_time(b, now - std::chrono::hours(24));
  set("HF_HUB_CACHE", dir_.path());
  EXPECT_EQ(find_hf_cache_snapshot("org/m"), a);
}

TEST_F(HfCache, RefsMainPointingAtMissingSnapshotFallsBack) {
  const fs::path a = add_snapshot(dir_.path(), "org/m", kCommitA);
  add_ref(dir_.path(), "org/m", "main", kCommitB);
  set("HF_HUB_CACHE", dir_.path());
  EXPECT_EQ(find_hf_cache_snapshot("org/m"), a);
}

TEST_F(HfCache, SnapshotWithoutConfigDoesNotCount) {
  add_snapshot(dir_.path(), "org/m", kCommitA, /*with_config=*/false);
  add_ref(dir_.path(), "org/m", "main", kCommitA);
  set("HF_HUB_CACHE", dir_.path());
  EXPECT_EQ(find_hf_cache_snapshot("org/m"), std::nullopt);
}

TEST_F(HfCache, RevisionAsBranch) {
  add_snapshot(dir_.path(), "org/m", kCommitA);
  const fs::path b = add_snapshot(dir_.path(), "org/m", kCommitB);
  add_ref(dir_.path(), "org/m", "main", kCommitA);
  add_ref(dir_.path(), "org/m", "dev", kCommitB);
  set("HF_HUB_CACHE", dir_.path());
  EXPECT_EQ(find_hf_cache_snapshot("org/m@dev"), b);
}

TEST_F(HfCache, RevisionAsCommitHash) {
  const fs::path a = add_snapshot(dir_.path(), "org/m", kCommitA);
  add_snapshot(dir_.path(), "org/m", kCommitB);
  add_ref(dir_.path(), "org/m", "main", kCommitB);
  set("HF_HUB_CACHE", dir_.path());
  EXPECT_EQ(find_hf_cache_snapshot("org/m@" + kCommitA), a);
}

TEST_F(HfCache, UnknownRevision) {
  add_snapshot(dir_.path(), "org/m", kCommitA);
  set("HF_HUB_CACHE", dir_.path());
  EXPECT_EQ(find_hf_cache_snapshot("org/m@nope"), std::nullopt);
}

TEST_F(HfCache, ModelNotInCache) {
  set("HF_HUB_CACHE", dir_.path());
  EXPECT_EQ(find_hf_cache_snapshot("org/absent"), std::nullopt);
}

TEST_F(HfCache, IdsThatAreNotOrgSlashName) {
  add_snapshot(dir_.path(), "org/m", kCommitA);
  set("HF_HUB_CACHE", dir_.path());
  EXPECT_EQ(find_hf_cache_snapshot("m"), std::nullopt);
  EXPECT_EQ(find_hf_cache_snapshot("/m"), std::nullopt);
  EXPECT_EQ(find_hf_cache_snapshot("org/"), std::nullopt);
  EXPECT_EQ(find_hf_cache_snapshot("../org/m"), std::nullopt);
  EXPECT_EQ(find_hf_cache_snapshot("org/m@../../x"), std::nullopt);
  EXPECT_EQ(find_hf_cache_snapshot("org/m/extra"), std::nullopt);
}

TEST_F(HfCache, NoHomeAndNoVariables) {
  EXPECT_EQ(hf_cache_root(), std::nullopt);
}

}  // namespace
}  // namespace trainmem::io
