// The web page's one entry point: a JSON request in, a JSON response out. A front end over the
// library's public API (include/trainmem/), as the command line is: every number comes from the
// same library calls, and every document in a response is one the library renders (render.h), the
// same text `trainmem ... --json` prints for the same request. This file only turns request fields
// into the library's values and wraps the library's documents in the response.
//
// Request:  {"op": "estimate"|"explain"|"advise"|"sweep"|"devices"|"models"|"form",
//            "model": {"preset": ID} | {"config_text": T, "name": N}
//                     | {"folder": N, "config_text": T, "index_text": T?,
//                        "safetensors": [{"name", "size", "prefix_b64"}]},
//            "plan": {"method": "lora", "batch": 4, ... the plan setting keys (plan.h)},
//            "layout": {"engine": "deepspeed", "zero_stage": 3, "gpus_per_node": 8, ...}
//                      (optional: the plan JSON's layout fields, docs/formats.md),
//            "device": {"gpu": ID} | {"memory": "24GiB"} (optional), "reserve": "2GB",
//            "units": "gib", "over": "batch"|"seq", "values": [..]}
// Response: {"ok": true, ...} or {"ok": false, "error": "FILE: FIELD: REASON", "field": F}.
// devices, models and form answer the library's document with "ok" added (form with a "plan"
// answers the defaults once that plan's framework and method are given); estimate, explain,
// advise and sweep embed theirs by name (estimate and explain across GPUs: "distributed").
// docs/web.md describes each op.
#include <emscripten/emscripten.h>

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "trainmem/model.h"
#include "trainmem/trainmem.h"

namespace trainmem::web {
namespace {

using nlohmann::json;

Error usage(std::string field, std::string reason) {
  return Error{ErrorCode::usage, "", std::move(field), std::move(reason)};
}

// "lora_rank" -> "--lora-rank": request keys are the flags in snake_case.
std::string flag_name(std::string key) {
  for (char& c : key) {
    if (c == '_') c = '-';
  }
  return "--" + key;
}

// --- request fields -> library values -------------------------------------------------------
// The plan is the library's plan_from() over the request's settings, as the command line's flags
// are (each setting named by its flag in errors); the device and the units use the library's
// find_device(), custom_device() and parse_size() / parse_unit(), as the command line does.

std::string text_field(const json& obj, const char* key, const std::string& fallback) {
  const auto it = obj.find(key);
  return (it != obj.end() && it->is_string()) ? it->get<std::string>() : fallback;
}

// validate() names a plan field ("batch", "lora.rank"); one that is a setting key is named by that
// setting's flag, as the request's settings are. Layout checks name the flag already ("--tp").
Error named_by_flag(Error e) {
  std::string key = e.field;
  std::replace(key.begin(), key.end(), '.', '_');
  const std::vector<std::string>& keys = plan_setting_keys();
  if (e.file.empty() && std::find(keys.begin(), keys.end(), key) != keys.end()) {
    e.field = flag_name(key);
  }
  return e;
}

Result<PlanResult> plan_of(const json& p) {
  if (!p.is_object()) return usage("plan", "must be an object");
  // The request's fields are the plan setting keys; each applies as the flag of that name would,
  // over the command line's defaults (hf_trainer_defaults() and the framework's profile).
  PlanPatch patch;
  for (const std::string& key : plan_setting_keys()) {
    const auto it = p.find(key);
    if (it == p.end() || it->is_null()) continue;
    const std::string flag = flag_name(key);
    std::string value;
    if (it->is_string()) {
      value = it->get<std::string>();
    } else if (it->is_boolean()) {
      value = it->get<bool>() ? "true" : "false";
    } else if (it->is_number_integer()) {
      value = std::to_string(it->get<std::int64_t>());
    } else if (it->is_number()) {
      value = json(it->get<double>()).dump();
    } else {
      return usage(flag, "must be a string, a number or true/false");
    }
    // The form sends every field, so a setting the chosen method ignores (lora_dropout with
    // method full) is a note, as in an imported file, not an error.
    patch.push_back({key, value, flag, true});
  }
  auto plan = plan_from(patch);
  if (!plan) return named_by_flag(plan.error());
  return std::move(plan).value();
}

// The request's "layout" over the plan the settings gave, as Python's layout= is: the plan
// written as the library's plan JSON, its "layout" object updated with the request's fields (the
// plan JSON's names: gpus_per_node, nodes, engine, zero_stage, fsdp, tp, pp, offload_optimizer,
// ...), and read back by plan_from_json(), so names, types, ranges and messages are the library's.
// An error names the field ("layout.zero_stage") or the flag a layout check names ("--tp").
Result<TrainingPlan> with_layout(const TrainingPlan& plan, const json& layout) {
  if (layout.is_null()) return plan;
  if (!layout.is_object()) {
    return usage("layout",
                 "must be an object of the plan's layout fields, such as {\"engine\": "
                 "\"deepspeed\", \"zero_stage\": 3, \"gpus_per_node\": 8}");
  }
  json whole = json::parse(render_plan_json(plan));
  json merged = whole.value("layout", json::object());
  merged.update(layout);
  whole["layout"] = std::move(merged);
  auto read = plan_from_json(whole.dump(), "");
  if (!read) return named_by_flag(read.error());
  return std::move(read).value();
}

// {"gpu": ID} or {"memory": SIZE}, and "reserve": the command line's --gpu, --memory, --reserve.
Result<std::optional<Device>> device_of(const json& req) {
  const json dev = req.value("device", json::object());
  const std::string gpu = text_field(dev, "gpu", "");
  const std::string memory = text_field(dev, "memory", "");
  const std::string reserve = text_field(req, "reserve", "");
  if (!gpu.empty() && !memory.empty())
    return usage("--gpu", "give either --gpu or --memory, not both");
  std::optional<Device> device;
  if (!memory.empty()) {
    auto bytes = parse_size(memory, "--memory");
    if (!bytes) return bytes.error();
    if (bytes.value() < kMiB) {
      return usage("--memory", "'" + memory + "' is " + std::to_string(bytes.value()) +
                                   " bytes; give a device size with a unit, e.g. 24GB");
    }
    device = custom_device(bytes.value());
  }
  if (!gpu.empty()) {
    auto found = find_device(gpu);
    if (!found) return found.error();
    device = found.value();
  }
  if (!reserve.empty()) {
    auto bytes = parse_size(reserve, "--reserve");
    if (!bytes) return bytes.error();
    if (!device) return usage("--reserve", "needs --memory or --gpu");
    auto reserved = with_reserve(*device, bytes.value());
    if (!reserved) return reserved.error();
    device = std::move(reserved).value();
  }
  return device;
}

Result<RenderOptions> options_of(const json& req) {
  const std::string units = text_field(req, "units", "gib");
  const auto unit = parse_unit(units);
  if (!unit) return usage("--units", "'" + units + "' is not one of: gib, gb, mib, bytes");
  RenderOptions o;
  o.unit = *unit;
  return o;
}

Result<std::string> base64_decode(const std::string& in, const std::string& field) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    const auto pos = kAlphabet.find(c);
    if (pos == std::string::npos) return usage(field, "is not base64");
    acc = (acc << 6) | static_cast<std::uint32_t>(pos);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  return out;
}

// Loaded models are kept by request text: a preset or a folder is parsed once, not per keystroke.
std::map<std::string, std::shared_ptr<const LoadedModel>>& model_cache() {
  static std::map<std::string, std::shared_ptr<const LoadedModel>> cache;
  return cache;
}

Result<std::shared_ptr<const LoadedModel>> model_from(const json& m) {
  if (!m.is_object())
    return usage("model", "choose a preset, paste a config.json or drop a folder");
  const std::string key = m.dump();
  if (auto it = model_cache().find(key); it != model_cache().end()) return it->second;
  Result<LoadedModel> loaded =
      usage("model", "choose a preset, paste a config.json or drop a folder");
  if (m.contains("preset")) {
    loaded = load_preset(text_field(m, "preset", ""));
  } else if (m.contains("config_text")) {
    ModelFiles files;
    files.folder = text_field(m, "folder", "");
    files.config_text = text_field(m, "config_text", "");
    if (m.contains("index_text") && m["index_text"].is_string()) {
      files.index_text = m["index_text"].get<std::string>();
    }
    for (const json& f : m.value("safetensors", json::array())) {
      HeaderPrefix h;
      h.name = text_field(f, "name", "");
      h.size_bytes = f.value("size", std::int64_t{0});
      auto prefix = base64_decode(text_field(f, "prefix_b64", ""), h.name);
      if (!prefix) return prefix.error();
      h.prefix = std::move(prefix).value();
      files.safetensors.push_back(std::move(h));
    }
    loaded = load_model_files(files);
    if (loaded && files.folder.empty()) loaded->spec.name = text_field(m, "name", "config.json");
  }
  if (!loaded) return loaded.error();
  if (model_cache().size() > 32) model_cache().clear();
  auto shared = std::make_shared<const LoadedModel>(std::move(loaded).value());
  model_cache()[key] = shared;
  return shared;
}

// --- library documents -> response ------------------------------------------------------------

// A document the library rendered (render.h), as a JSON value to embed.
json doc(const std::string& text) {
  return json::parse(text);
}

// A listing document with "ok" added: the page reads its fields where the document has them.
json ok_with(json document) {
  document["ok"] = true;
  return document;
}

json run(const json& req) {
  const std::string op = text_field(req, "op", "");
  if (op == "devices") return ok_with(doc(render_devices_json(list_devices())));
  if (op == "models") return ok_with(doc(render_models_json(list_models())));
  if (op == "form") {
    // With a plan ({"framework": ..., "method": ...}): the defaults once those are given.
    if (!req.contains("plan")) return ok_with(doc(render_form_json()));
    auto plan = plan_of(req.at("plan"));
    if (!plan) throw plan.error();
    return ok_with(doc(render_form_json(plan->plan)));
  }
  auto model = model_from(req.value("model", json()));
  if (!model) throw model.error();
  auto settled = plan_of(req.value("plan", json::object()));
  if (!settled) throw settled.error();
  auto laid_out = with_layout(settled->plan, req.value("layout", json()));
  if (!laid_out) throw laid_out.error();
  const TrainingPlan& plan = *laid_out;
  auto device = device_of(req);
  if (!device) throw device.error();
  auto options = options_of(req);
  if (!options) throw options.error();
  const LoadedModel& m = **model;
  // Refused as the command line refuses it: the layout, the layers and LoRA targets the plan
  // names, and the size rule (a plan past it would price a saturated 8 EiB).
  if (auto e = check_plan_for_model(m, plan)) throw *e;

  if (op == "estimate" || op == "explain") {
    // The notes the command line's report opens with: the defaults the plan took (the LoRA
    // recipe's bf16 base, a framework profile's), then what it means on this model and device.
    std::vector<std::string> notes = settled->notes;
    for (std::string& n : plan_notes(m, plan, *device ? &**device : nullptr))
      notes.push_back(std::move(n));
    // The verdict every command gives (judge(), trainmem/device.h), with the plan's allocator
    // configuration and CUDA runtime (the page's PYTORCH_CUDA_ALLOC_CONF and CUDA fields).
    const GpuOptions gopt = gpu_options_for(*device, plan);
    const bool cuda = !*device || (*device)->kind != DeviceKind::unified;
    if (!is_single_device(plan.layout)) {
      // Across GPUs, as `trainmem estimate --gpus N ... --json` prints it: per-rank ledgers, the
      // most-loaded rank replayed and judged like one GPU (judge_distributed), host per node.
      auto v = judge_distributed(m, plan, *device, gopt);
      if (!v) throw v.error();
      v->estimate.notes.insert(v->estimate.notes.begin(), notes.begin(), notes.end());
      const DistributedEstimate& d = v->estimate;
      const Fit* f = v->fit ? &*v->fit : nullptr;
      json out = {{"ok", true},
                  {"distributed", doc(render_distributed_json(d, f, cuda ? &v->gpu : nullptr))},
                  {"timeline", doc(render_timeline_json(d.ranks[d.most_loaded].ledger))},
                  {"model_notes", m.notes}};
      if (f) out["verdict"] = gb_and_gib(f->peak_bytes);
      if (op == "explain") {
        out["explain"] = render_distributed_explain(d, *options, cuda ? &v->gpu : nullptr);
      }
      return out;
    }
    Ledger ledger = estimate(m, plan);
    ledger.notes.insert(ledger.notes.begin(), notes.begin(), notes.end());
    auto gpu = gpu_estimate(m, plan, ledger, gopt);
    if (!gpu) throw gpu.error();
    std::optional<Fit> f;
    if (*device) f = judge(*gpu, totals(ledger), **device);
    json out = {{"ok", true},
                {"ledger", doc(render_json(ledger, f ? &*f : nullptr, cuda ? &*gpu : nullptr))},
                {"timeline", doc(render_timeline_json(ledger))},
                {"model_notes", m.notes}};
    if (f) out["verdict"] = gb_and_gib(f->peak_bytes);
    if (op == "explain") {
      out["explain"] = render_explain(ledger, *options, cuda && gpu->available ? &*gpu : nullptr);
    }
    return out;
  }
  if (op == "advise") {
    if (!*device) throw usage("--gpu", "advise needs a device");
    // As `trainmem advise`: the changes on one GPU, then more GPUs when one is not enough; with
    // a layout, each change judged on its most-loaded rank (judge()), the layout kept.
    Advice adv = advise(m, plan, **device);
    add_layout_options(m, plan, **device, adv);
    return {{"ok", true}, {"advice", doc(render_advice_json(adv, m.spec.name))}};
  }
  if (op == "sweep") {
    const auto axis = parse_sweep_axis(text_field(req, "over", "batch"));
    if (!axis) throw usage("--over", "must be batch or seq");
    std::vector<std::int64_t> values = default_sweep_values(*axis, plan);
    if (req.contains("values")) values = req["values"].get<std::vector<std::int64_t>>();
    // With a layout, each point is the most-loaded rank's, judged as estimate judges it.
    const Sweep s = sweep(m, plan, *axis, values, *device);
    return {{"ok", true}, {"sweep", doc(render_sweep_json({s}, m.spec.name, name_of(*axis)))}};
  }
  throw usage(
      "op", "'" + op + "' is not one of: estimate, explain, advise, sweep, devices, models, form");
}

}  // namespace
}  // namespace trainmem::web

// The one exported function. The returned string lives until the next call.
extern "C" EMSCRIPTEN_KEEPALIVE const char* trainmem_call(const char* request) {
  using nlohmann::json;
  static std::string response;
  try {
    response = trainmem::web::run(json::parse(request)).dump();
  } catch (const trainmem::Error& error) {
    // A request's setting is named by its flag (plan_of()); the library names the rest.
    const trainmem::Error& e = error;
    response =
        json{{"ok", false}, {"error", e.message()}, {"field", e.field}, {"file", e.file}}.dump();
  } catch (const std::exception& e) {
    response = json{{"ok", false}, {"error", std::string("bad request: ") + e.what()}}.dump();
  }
  return response.c_str();
}
