// The web page's one entry point: a JSON request in, a JSON response out. Every number comes from
// the same library calls as the command line (load, estimate, fit, advise, sweep, the renderers);
// this file only turns request fields into the library's values, and values into JSON.
//
// Request:  {"op": "estimate"|"explain"|"advise"|"sweep"|"devices"|"models"|"form",
//            "model": {"preset": ID} | {"config_text": T, "name": N}
//                     | {"folder": N, "config_text": T, "index_text": T?,
//                        "safetensors": [{"name", "size", "prefix_b64"}]},
//            "plan": {"method": "lora", "batch": 4, ... the CLI's flags in snake_case},
//            "device": {"gpu": ID} | {"memory": "24GiB"} (optional), "reserve": "2GB",
//            "units": "gib", "over": "batch"|"seq", "values": [..]}
// Response: {"ok": true, ...} or {"ok": false, "error": "FILE: FIELD: REASON", "field": F}.
// docs/web.md describes each op's fields.
#include <emscripten/emscripten.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "flags.h"        // tools/cli: the command line's flag structs and their parsers
#include "render/json.h"  // ledger_json(), the trainmem.ledger/1 document, as the CLI uses it
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
// The plan and the device are read by the command line's own functions (tools/cli/flags.h):
// the request's fields fill the same structs as the flags do, so defaults, accepted names,
// validation and error messages are the command line's.

std::string text_field(const json& obj, const char* key, const std::string& fallback) {
  const auto it = obj.find(key);
  return (it != obj.end() && it->is_string()) ? it->get<std::string>() : fallback;
}

Result<TrainingPlan> plan_from(const json& p) {
  if (!p.is_object()) return usage("plan", "must be an object");
  // The request's fields are the plan setting keys; each applies as the flag of that name would,
  // over the command line's defaults (hf_trainer_defaults() and the framework's profile).
  cli::PlanFlags f;
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
    f.given.push_back({key, value, flag, true});
  }
  auto plan = cli::make_plan(f);
  if (!plan) return plan.error();
  return plan->plan;
}

Result<std::optional<Device>> device_from(const json& req) {
  const json dev = req.value("device", json::object());
  cli::DeviceFlags f;
  f.gpu = text_field(dev, "gpu", "");
  f.memory = text_field(dev, "memory", "");
  f.reserve = text_field(req, "reserve", "");
  return cli::make_device(f);
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

// --- library values -> response JSON ----------------------------------------------------------

json timeline_json(const Ledger& ledger, const Totals& t) {
  json rows = json::array();
  for (int slot = 0; slot < kPhaseSlots; ++slot) {
    const auto live = live_at_slot(ledger, slot);
    json by_tenant = json::object();
    for (int k = 0; k < kTenantCount; ++k) {
      by_tenant[std::string(tenant_name(static_cast<Tenant>(k)))] =
          live[static_cast<std::size_t>(k)];
    }
    rows.push_back({{"slot", slot_name(slot)},
                    {"bytes", t.by_slot[static_cast<std::size_t>(slot)]},
                    {"peak", slot == t.peak_slot},
                    {"by_tenant", by_tenant}});
  }
  return rows;
}

json tenants_json() {
  json out = json::array();
  for (int k = 0; k < kTenantCount; ++k) {
    const auto t = static_cast<Tenant>(k);
    out.push_back({{"id", tenant_name(t)}, {"title", tenant_title(t)}});
  }
  return out;
}

json advice_json(const Advice& adv) {
  json opts = json::array();
  for (const AdviceOption& o : adv.options) {
    opts.push_back({{"change", o.change},
                    {"flags", o.flags},
                    {"peak_bytes", o.peak_bytes},
                    {"fits", o.fits},
                    {"margin_bytes", o.margin_bytes},
                    {"cost", o.cost},
                    {"changes", o.parts}});
  }
  return {{"fits_now", adv.fits_now}, {"now", fit_json(adv.now)}, {"options", opts}};
}

json sweep_json(const Sweep& s) {
  json pts = json::array();
  for (const SweepPoint& p : s.points) {
    pts.push_back({{"x", p.x}, {"peak_bytes", p.peak_bytes}, {"static_bytes", p.static_bytes}});
  }
  json out = {{"over", name_of(s.axis)}, {"points", pts}};
  if (s.device) out["usable_bytes"] = s.device->usable_bytes();
  return out;
}

Result<RenderOptions> options_from(const json& req) {
  cli::OutputFlags f;
  f.units = text_field(req, "units", f.units);
  return cli::make_render_options(f);
}

// What the form offers and where it starts: the command line's defaults (default_settings()) and,
// for each enumerated setting, its vocabulary's canonical names. The page builds its selects from
// these, so the form and `trainmem estimate` with no flags price the same plan.
json form_json() {
  json defaults = json::object();
  for (const PlanSetting& s : default_settings()) defaults[s.key] = s.value;
  const std::pair<const char*, const Vocabulary*> enumerated[] = {
      {"method", &method_vocabulary()},
      {"precision", &precision_vocabulary()},
      {"optimizer", &optimizer_vocabulary()},
      {"optimizer_impl", &optimizer_impl_vocabulary()},
      {"checkpointing", &checkpointing_vocabulary()},
      {"attention", &attention_vocabulary()},
      {"loss", &loss_vocabulary()},
      {"quant", &quant_vocabulary()},
      {"eval_strategy", &eval_strategy_vocabulary()}};
  json choices = json::object();
  for (const auto& [key, vocabulary] : enumerated) {
    json terms = json::array();
    for (const Term& t : vocabulary->terms)
      terms.push_back({{"name", t.name}, {"meaning", t.meaning}});
    choices[key] = terms;
  }
  return {{"ok", true}, {"defaults", defaults}, {"choices", choices}};
}

json run(const json& req) {
  const std::string op = text_field(req, "op", "");
  if (op == "devices") {
    json rows = json::array();
    for (const Device& d : list_devices()) {
      json row = device_json(d);
      row["capacity"] = gb_and_gib(d.capacity_bytes);
      rows.push_back(row);
    }
    return {{"ok", true}, {"devices", rows}};
  }
  if (op == "models") {
    json rows = json::array();
    for (const PresetInfo& p : list_presets()) {
      rows.push_back({{"id", p.id}, {"hf_id", p.hf_id}, {"published", p.published}});
    }
    return {{"ok", true}, {"models", rows}, {"tenants", tenants_json()}};
  }
  if (op == "form") return form_json();
  auto model = model_from(req.value("model", json()));
  if (!model) throw model.error();
  auto plan = plan_from(req.value("plan", json::object()));
  if (!plan) throw plan.error();
  auto device = device_from(req);
  if (!device) throw device.error();
  auto options = options_from(req);
  if (!options) throw options.error();
  const LoadedModel& m = **model;

  if (op == "estimate" || op == "explain") {
    const Ledger ledger = estimate(m, *plan);
    const Totals t = totals(ledger);
    // The verdict every command gives (judge(), trainmem/device.h). A page has no
    // PYTORCH_CUDA_ALLOC_CONF: PyTorch's defaults.
    const GpuOptions gopt = *device ? gpu_options_for(**device, "") : GpuOptions{};
    auto gpu = gpu_estimate(m, *plan, ledger, gopt);
    if (!gpu) throw gpu.error();
    const bool cuda = !*device || (*device)->kind != DeviceKind::unified;
    std::optional<Fit> f;
    if (*device) f = judge(*gpu, t, **device);
    json out = {{"ok", true},
                {"ledger", ledger_json(ledger, f ? &*f : nullptr, cuda ? &*gpu : nullptr)},
                {"timeline", timeline_json(ledger, t)},
                {"model_notes", m.notes}};
    if (f) out["verdict"] = gb_and_gib(f->peak_bytes);
    if (op == "explain") out["explain"] = render_explain(ledger, *options);
    return out;
  }
  if (op == "advise") {
    if (!*device) throw usage("--gpu", "advise needs a device");
    return {{"ok", true}, {"advice", advice_json(advise(m, *plan, **device))}};
  }
  if (op == "sweep") {
    const auto axis = parse_sweep_axis(text_field(req, "over", "batch"));
    if (!axis) throw usage("--over", "must be batch or seq");
    std::vector<std::int64_t> values = default_sweep_values(*axis, *plan);
    if (req.contains("values")) values = req["values"].get<std::vector<std::int64_t>>();
    return {{"ok", true}, {"sweep", sweep_json(sweep(m, *plan, *axis, values, *device))}};
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
    // Named as the command line names it (report() in tools/cli/flags.cpp): a plan field by its
    // flag.
    trainmem::Error e = error;
    if (e.file.empty()) e.field = trainmem::cli::flag_for_field(e.field);
    response =
        json{{"ok", false}, {"error", e.message()}, {"field", e.field}, {"file", e.file}}.dump();
  } catch (const std::exception& e) {
    response = json{{"ok", false}, {"error", std::string("bad request: ") + e.what()}}.dump();
  }
  return response.c_str();
}
