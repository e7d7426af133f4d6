// config.json -> ModelSpec. Picks the adapter by model_type (not architectures[0]), reads the
// language model from a nested text_config when the file wraps one (Gemma 3, LLaVA-style), and
// reads the dtype from dtype, then torch_dtype (ecosystem.md 1.1).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "io/json_parse.h"
#include "model/adapters/adapters.h"
#include "trainmem/model.h"
#include "util/json_text.h"

namespace trainmem {
namespace {

using nlohmann::json;

// Keys under which multimodal configs nest their language model.
constexpr std::string_view kNestedKeys[] = {"text_config", "llm_config", "language_config"};

// Wrapper model_types whose text model is a known family.
std::string text_model_type(const std::string& outer, const json& inner) {
  if (inner.contains("model_type") && inner["model_type"].is_string()) {
    return inner["model_type"].get<std::string>();
  }
  if (outer == "gemma3") return "gemma3_text";
  return outer;
}

std::string supported_types() {
  std::string out;
  for (const adapters::Adapter& a : adapters::all()) {
    if (!out.empty()) out += ", ";
    out += a.model_type;
  }
  return out;
}

// The first of dtype, torch_dtype that is present; absent both, bf16. A value that names no
// dtype is an error rather than a silent bf16: the weights' bytes follow from it.
Result<Dtype> read_dtype(const json& config, const std::string& file) {
  for (const char* key : {"dtype", "torch_dtype"}) {
    if (!config.contains(key) || config[key].is_null()) continue;
    if (!config[key].is_string()) {
      return bad_input(file, key,
                       fmt::format("must be a dtype name such as \"bfloat16\", got {}",
                                   json_excerpt(config[key])));
    }
    std::string text = config[key].get<std::string>();
    if (text.rfind("torch.", 0) == 0) text = text.substr(6);
    if (auto d = parse_dtype(text)) return *d;
    return bad_input(file, key,
                     fmt::format("'{}' is not a known dtype (float32, bfloat16, float16, "
                                 "float64, int8, uint8, float8_e4m3fn)",
                                 text_excerpt(text, 40)));
  }
  return Dtype::bf16;
}

bool flag_true(const json& q, const char* key) {
  return q.contains(key) && q[key].is_boolean() && q[key].get<bool>();
}

// quantization_config as transformers' quantizer configs write it (utils/quantization_config.py):
// quant_method names the quantizer; a bitsandbytes one loads 4-bit (bnb_4bit_quant_type, nf4 or
// fp4) or 8-bit. Configs written before quant_method existed say only load_in_4bit/8bit.
Result<std::optional<CheckpointQuant>> read_checkpoint_quant(const json& root,
                                                             const std::string& file) {
  constexpr const char* kKey = "quantization_config";
  if (!root.contains(kKey) || root[kKey].is_null()) return std::optional<CheckpointQuant>{};
  const json& q = root[kKey];
  if (!q.is_object()) {
    return bad_input(file, kKey, fmt::format("must be an object, got {}", json_excerpt(q)));
  }
  CheckpointQuant out;
  if (q.contains("quant_method") && !q["quant_method"].is_null()) {
    if (!q["quant_method"].is_string()) {
      return bad_input(file, "quantization_config.quant_method",
                       fmt::format("must be a name such as \"bitsandbytes\", got {}",
                                   json_excerpt(q["quant_method"])));
    }
    out.method = q["quant_method"].get<std::string>();
  }
  const bool four = flag_true(q, "load_in_4bit");
  const bool eight = flag_true(q, "load_in_8bit");
  if (out.method.empty() && (four || eight)) out.method = "bitsandbytes";
  if (out.method.empty()) {
    return bad_input(file, "quantization_config.quant_method",
                     "is missing: cannot tell how the checkpoint is quantised");
  }
  if (out.method != "bitsandbytes") return std::optional<CheckpointQuant>{out};
  if (four == eight) {
    return bad_input(file, "quantization_config",
                     "a bitsandbytes config must set exactly one of load_in_4bit and load_in_8bit");
  }
  if (eight) {
    out.storage = "int8";
    return std::optional<CheckpointQuant>{out};
  }
  out.storage = "fp4";  // BitsAndBytesConfig's default bnb_4bit_quant_type
  if (q.contains("bnb_4bit_quant_type") && !q["bnb_4bit_quant_type"].is_null()) {
    const json& t = q["bnb_4bit_quant_type"];
    if (!t.is_string() || (t.get<std::string>() != "nf4" && t.get<std::string>() != "fp4")) {
      return bad_input(file, "quantization_config.bnb_4bit_quant_type",
                       fmt::format("must be \"nf4\" or \"fp4\", got {}", json_excerpt(t)));
    }
    out.storage = t.get<std::string>();
  }
  out.double_quant = flag_true(q, "bnb_4bit_use_double_quant");
  return std::optional<CheckpointQuant>{out};
}

}  // namespace

Result<ModelSpec> spec_from_config_text(std::string_view json_text, const std::string& file) {
  auto parsed = io::parse_json(json_text, file);
  if (!parsed) return parsed.error();
  const json& root = parsed.value();
  if (!root.is_object()) return bad_input(file, "", "must be a JSON object");
  if (!root.contains("model_type") || root["model_type"].is_null()) {
    return bad_input(file, "model_type", "is missing: cannot tell the architecture");
  }
  if (!root["model_type"].is_string() || root["model_type"].get<std::string>().empty()) {
    return bad_input(file, "model_type",
                     fmt::format("must name the architecture (\"llama\", \"qwen3\", ...), got {}",
                                 json_excerpt(root["model_type"])));
  }
  const std::string outer_type = root["model_type"].get<std::string>();
  const json* config = &root;
  std::string model_type = outer_type;
  std::string path;  // where the language model's keys sit, for errors
  // A family's own config class ignores a nested text_config; a wrapper keeps its language model
  // there (Gemma 3, LLaVA-style).
  for (std::string_view key : kNestedKeys) {
    const std::string k(key);
    if (adapters::find(outer_type) == nullptr && root.contains(k) && root[k].is_object()) {
      config = &root[k];
      model_type = text_model_type(outer_type, root[k]);
      path = k + ".";
      break;
    }
  }
  const adapters::Adapter* adapter = adapters::find(model_type);
  ModelSpec spec;
  spec.model_type = model_type;
  auto dtype = read_dtype(*config, file);
  if (!dtype) return dtype.error();
  spec.storage_dtype = dtype.value();
  // A multimodal wrapper keeps quantization_config at the top, beside its text_config.
  auto quant = read_checkpoint_quant(root, file);
  if (!quant) return quant.error();
  spec.checkpoint_quant = std::move(quant).value();
  adapters::ConfigReader reader(*config, file, path);
  if (adapter != nullptr) {
    adapter->read(reader, spec);
  } else {
    // Not a known family: read the standard keys as the closest known layer shape rather than
    // refuse; the estimate says so (spec.estimated_from).
    adapters::read_generic(reader, spec);
    if (reader.error()) {
      const Error& e = *reader.error();
      if (e.field == "model_type") return e;  // refused for what the family is (generic.cpp)
      return Error{e.code, e.file, e.field,
                   fmt::format("{} ('{}' has no adapter, so its standard keys are read; "
                               "families with adapters: {})",
                               e.reason, text_excerpt(model_type, 40), supported_types())};
    }
  }
  adapters::check_common(reader, spec);
  if (reader.error()) return *reader.error();
  spec.defaulted_keys = reader.defaulted();
  // A multimodal wrapper (Gemma 3, LLaVA-style) also holds encoders for other inputs; only its
  // language model is priced, and the report says so.
  // (Qwen2-VL and Qwen2.5-VL keep the language model's keys at the top, beside vision_config.)
  for (const char* key : {"vision_config", "audio_config", "vision_tower"}) {
    if (root.contains(key) && !root[key].is_null()) spec.unpriced_parts.emplace_back(key);
  }
  return spec;
}

}  // namespace trainmem
