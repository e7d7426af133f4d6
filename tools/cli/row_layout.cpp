#include "row_layout.h"

#include <fmt/format.h>

#include <charconv>

#include "trainmem/render.h"

namespace trainmem::cli {
namespace {

Error bad(const std::string& where, const std::string& key, const std::string& reason) {
  return bad_input(where, "config.layout." + key, reason);
}

Result<std::int64_t> whole(const std::string& where, const std::string& key, const std::string& v) {
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc{} || end != v.data() + v.size() || n < 0) {
    return bad(where, key, fmt::format("'{}' is not a non-negative integer", v));
  }
  return n;
}

Result<bool> boolean(const std::string& where, const std::string& key, const std::string& v) {
  if (v == "true") return true;
  if (v == "false") return false;
  return bad(where, key, fmt::format("'{}' is not true or false", v));
}

}  // namespace

Result<LayoutFlags> layout_flags_of(const std::map<std::string, std::string>& layout,
                                    const std::string& where) {
  LayoutFlags f;
  for (const auto& [key, v] : layout) {
    std::int64_t* count = key == "gpus"             ? &f.gpus
                          : key == "nodes"          ? &f.nodes
                          : key == "tp"             ? &f.tp
                          : key == "pp"             ? &f.pp
                          : key == "cp"             ? &f.cp
                          : key == "ep"             ? &f.ep
                          : key == "virtual_stages" ? &f.virtual_stages
                                                    : nullptr;
    bool* flag = key == "sequence_parallel"         ? &f.sequence_parallel
                 : key == "distributed_optimizer"   ? &f.distributed_optimizer
                 : key == "gradient_as_bucket_view" ? &f.gradient_as_bucket_view
                                                    : nullptr;
    std::string* text = key == "engine"                  ? &f.engine
                        : key == "fsdp"                  ? &f.fsdp
                        : key == "offload"               ? &f.offload
                        : key == "offload_to"            ? &f.offload_to
                        : key == "reduce_bucket_size"    ? &f.reduce_bucket_size
                        : key == "custom_sharded_layers" ? &f.custom_sharded_layers
                                                         : nullptr;
    if (count != nullptr) {
      auto n = whole(where, key, v);
      if (!n) return n.error();
      *count = n.value();
    } else if (flag != nullptr) {
      auto b = boolean(where, key, v);
      if (!b) return b.error();
      *flag = b.value();
    } else if (text != nullptr) {
      *text = v;
    } else if (key == "zero" || key == "fsdp_version") {
      auto n = whole(where, key, v);
      if (!n) return n.error();
      if (n.value() > 3) return bad(where, key, fmt::format("'{}' is out of range", v));
      if (key == "zero") {
        f.zero = static_cast<int>(n.value());
      } else {
        f.fsdp_version = static_cast<int>(n.value());
      }
    } else if (key == "bucket_cap_mb") {
      double mb = 0;
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), mb);
      if (ec != std::errc{} || end != v.data() + v.size() || !(mb > 0)) {
        return bad(where, key, fmt::format("'{}' is not a positive number of MiB", v));
      }
      f.bucket_cap_mb = mb;
    } else {
      return bad(where, key, "not a layout setting (gpus, nodes, engine, zero, fsdp, ...)");
    }
  }
  return f;
}

}  // namespace trainmem::cli
