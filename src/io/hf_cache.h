// Offline resolution of a Hugging Face model id against the local hub cache (the layout
// huggingface_hub writes: models--{org}--{name}/refs/<branch>, snapshots/<commit>/, blobs/).
// Nothing here touches the network.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

namespace trainmem::io {

// The hub cache folder: $HF_HUB_CACHE, else $HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub. Empty variables count as unset.
// nullopt when none of these can be formed (no HOME).
std::optional<std::filesystem::path> hf_cache_root();

// The snapshot folder of `hf_id` ("org/name" or "org/name@rev", rev being a branch or tag in
// refs/ or a commit hash in snapshots/). Without a rev: the commit refs/main names, else the only
// (or the most recently written) snapshot. A snapshot counts only if it holds config.json.
std::optional<std::filesystem::path> find_hf_cache_snapshot(std::string_view hf_id);

}  // namespace trainmem::io
