// Local Hugging Face hub cache lookup. See research/ecosystem.md §1.7 and the hub's "local
// cache" specification.
#include "io/hf_cache.h"

#include <cstdlib>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "io/read_file.h"

namespace trainmem::io {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

// A repo-id part or revision that cannot step outside the cache.
bool safe_part(std::string_view s, bool allow_slash) {
  if (s.empty() || s == "." || s == ".." || s.find("..") != std::string_view::npos) return false;
  for (char c : s) {
    if (c == '\\' || c == '\0' || (c == '/' && !allow_slash)) return false;
  }
  return s.front() != '/';
}

bool has_config(const fs::path& snapshot) {
  std::error_code ec;
  return fs::is_regular_file(snapshot / "config.json", ec);
}

// The commit a ref file names, trimmed; nullopt when the file is absent or empty.
std::optional<std::string> read_ref(const fs::path& file) {
  // A ref file holds one commit id; a link to a device or pipe is not read (read_file.h).
  auto text = read_regular_file(file, 4096, "a ref file");
  if (!text) return std::nullopt;
  std::istringstream in(text.value());
  std::string hash;
  in >> hash;
  if (hash.empty() || !safe_part(hash, false)) return std::nullopt;
  return hash;
}

// Snapshots with a config.json: the only one, else the most recently written.
std::optional<fs::path> newest_snapshot(const fs::path& repo) {
  std::error_code ec;
  std::optional<fs::path> best;
  fs::file_time_type best_time{};
  for (const auto& entry : fs::directory_iterator(repo / "snapshots", ec)) {
    if (!entry.is_directory(ec) || !has_config(entry.path())) continue;
    const auto time = fs::last_write_time(entry.path(), ec);
    if (ec) continue;
    if (!best || time > best_time || (time == best_time && entry.path() > *best)) {
      best = entry.path();
      best_time = time;
    }
  }
  return best;
}

}  // namespace

std::optional<fs::path> hf_cache_root() {
  if (auto v = env("HF_HUB_CACHE")) return fs::path(*v);
  if (auto v = env("HUGGINGFACE_HUB_CACHE")) return fs::path(*v);
  if (auto v = env("HF_HOME")) return fs::path(*v) / "hub";
  if (auto v = env("XDG_CACHE_HOME")) return fs::path(*v) / "huggingface" / "hub";
  if (auto v = env("HOME")) return fs::path(*v) / ".cache" / "huggingface" / "hub";
  return std::nullopt;
}

std::optional<fs::path> find_hf_cache_snapshot(std::string_view hf_id) {
  std::string_view id = hf_id;
  std::optional<std::string_view> rev;
  if (const auto at = id.find('@'); at != std::string_view::npos) {
    rev = id.substr(at + 1);
    id = id.substr(0, at);
    if (!safe_part(*rev, true)) return std::nullopt;
  }
  const auto slash = id.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::string_view org = id.substr(0, slash);
  const std::string_view name = id.substr(slash + 1);
  if (!safe_part(org, false) || !safe_part(name, false)) return std::nullopt;

  const auto root = hf_cache_root();
  if (!root) return std::nullopt;
  const fs::path repo = *root / ("models--" + std::string(org) + "--" + std::string(name));
  std::error_code ec;
  if (!fs::is_directory(repo / "snapshots", ec)) return std::nullopt;

  if (rev) {
    if (auto hash = read_ref(repo / "refs" / std::string(*rev))) {
      const fs::path snapshot = repo / "snapshots" / *hash;
      if (has_config(snapshot)) return snapshot;
    }
    const fs::path direct = repo / "snapshots" / std::string(*rev);
    if (rev->find('/') == std::string_view::npos && has_config(direct)) return direct;
    return std::nullopt;
  }
  if (auto hash = read_ref(repo / "refs" / "main")) {
    const fs::path snapshot = repo / "snapshots" / *hash;
    if (has_config(snapshot)) return snapshot;
  }
  return newest_snapshot(repo);
}

}  // namespace trainmem::io
