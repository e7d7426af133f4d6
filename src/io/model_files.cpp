// load_model_files(): a model folder from file contents (the web page's dropped folder). Header
// parsing and tensor mapping are io/safetensors.h's, so a folder priced here and by the command
// line gives the same inventory.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "io/safetensors.h"
#include "trainmem/model.h"

namespace trainmem {
namespace {

using nlohmann::json;

std::string path_in(const ModelFiles& f, const std::string& name) {
  return f.folder.empty() ? name : f.folder + "/" + name;
}

// The shards model.safetensors.index.json maps tensors to: shard file -> tensor names.
Result<std::map<std::string, std::set<std::string>>> index_shards(const ModelFiles& f) {
  const std::string file = path_in(f, "model.safetensors.index.json");
  json root;
  try {
    root = json::parse(*f.index_text);
  } catch (const json::exception& e) {
    return bad_input(file, "", std::string("not valid JSON: ") + e.what());
  }
  if (!root.is_object()) return bad_input(file, "", "must be a JSON object");
  const auto map_it = root.find("weight_map");
  if (map_it == root.end()) return bad_input(file, "weight_map", "missing");
  if (!map_it->is_object() || map_it->empty()) {
    return bad_input(file, "weight_map", "must be a non-empty object of tensor name -> shard file");
  }
  std::map<std::string, std::set<std::string>> shards;
  for (const auto& [name, shard] : map_it->items()) {
    if (!shard.is_string()) {
      return bad_input(file, "weight_map." + name, "must name a shard file, got " + shard.dump());
    }
    shards[shard.get<std::string>()].insert(name);
  }
  return shards;
}

const HeaderPrefix* find_file(const ModelFiles& f, const std::string& name) {
  for (const HeaderPrefix& h : f.safetensors) {
    if (h.name == name) return &h;
  }
  return nullptr;
}

Result<std::vector<io::SafetensorsTensor>> read_indexed(const ModelFiles& f) {
  auto shards = index_shards(f);
  if (!shards) return shards.error();
  const std::string index_file = path_in(f, "model.safetensors.index.json");
  std::vector<io::SafetensorsTensor> all;
  std::set<std::string> seen;
  for (const auto& [shard, names] : *shards) {
    const HeaderPrefix* h = find_file(f, shard);
    if (h == nullptr) {
      return bad_input(index_file, "weight_map." + *names.begin(),
                       "names shard " + shard + ", which is not in the folder");
    }
    auto tensors = io::parse_safetensors_header(h->prefix, h->size_bytes, path_in(f, h->name));
    if (!tensors) return tensors.error();
    std::set<std::string> present;
    for (auto& t : *tensors) {
      present.insert(t.name);
      if (!seen.insert(t.name).second) {
        return bad_input(path_in(f, h->name), t.name, "tensor also stored in another shard");
      }
      all.push_back(std::move(t));
    }
    for (const std::string& name : names) {
      if (!present.count(name)) {
        return bad_input(index_file, "weight_map." + name, "shard " + shard + " does not hold it");
      }
    }
  }
  return all;
}

// No index: model*.safetensors when present, else every *.safetensors (as read_safetensors_folder).
Result<std::vector<io::SafetensorsTensor>> read_unindexed(const ModelFiles& f) {
  std::vector<const HeaderPrefix*> model_files, all_files;
  for (const HeaderPrefix& h : f.safetensors) {
    all_files.push_back(&h);
    if (h.name.rfind("model", 0) == 0) model_files.push_back(&h);
  }
  std::vector<const HeaderPrefix*>& files = model_files.empty() ? all_files : model_files;
  std::sort(files.begin(), files.end(), [](auto* a, auto* b) { return a->name < b->name; });
  std::vector<io::SafetensorsTensor> all;
  for (const HeaderPrefix* h : files) {
    auto tensors = io::parse_safetensors_header(h->prefix, h->size_bytes, path_in(f, h->name));
    if (!tensors) return tensors.error();
    for (auto& t : *tensors) all.push_back(std::move(t));
  }
  return all;
}

}  // namespace

Result<LoadedModel> load_model_files(const ModelFiles& f) {
  const std::string config_file = path_in(f, "config.json");
  auto spec = spec_from_config_text(f.config_text, config_file);
  if (!spec) return spec.error();
  if (spec->name.empty()) spec->name = f.folder.empty() ? "config.json" : f.folder;
  if (f.safetensors.empty()) {
    return model_from_spec(std::move(spec).value(), SourceKind::config_file, config_file);
  }
  auto tensors = f.index_text ? read_indexed(f) : read_unindexed(f);
  if (!tensors) return tensors.error();
  io::TensorMapping mapping = io::map_tensors(*tensors, *spec);
  if (auto e = io::check_headers_against_config(*tensors, mapping, *spec,
                                                f.folder.empty() ? config_file : f.folder))
    return *e;
  LoadedModel model;
  model.inventory = std::move(mapping.inventory);
  model.notes = std::move(mapping.notes);
  model.spec = std::move(spec).value();
  model.source = SourceKind::safetensors;
  model.source_detail = f.folder;
  return model;
}

}  // namespace trainmem
