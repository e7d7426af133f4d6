// plan_from_json(): a TrainingPlan from the JSON that render_plan_json() writes. Every key is
// optional (the field keeps its default); an unknown key, a wrong type or an unknown name is an
// error naming the key, so a typo is never silently ignored.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "io/json_parse.h"
#include "plan/framework.h"
#include "plan/plan.h"
#include "trainmem/plan.h"

namespace trainmem {
namespace {

using nlohmann::json;

// The parsers' return types, complete before plan_from_json() takes the parsers' addresses. Clang
// 14 (emscripten 3.1.6, the web page's build) declares a function whose address is taken while its
// return type is a class template not yet instantiated in the file as `void()`; wasm-ld then links
// every call through that address to a trap ("function signature mismatch"). Native builds are
// unaffected either way.
static_assert(sizeof(std::optional<Method>) + sizeof(std::optional<Precision>) +
                  sizeof(std::optional<OptimizerKind>) + sizeof(std::optional<OptimizerImpl>) +
                  sizeof(std::optional<Checkpointing>) + sizeof(std::optional<Attention>) +
                  sizeof(std::optional<Loss>) + sizeof(std::optional<EvalStrategy>) +
                  sizeof(std::optional<Convention>) + sizeof(std::optional<QuantKind>) +
                  sizeof(std::optional<Engine>) + sizeof(std::optional<FsdpMode>) +
                  sizeof(std::optional<OffloadTarget>) >
              0);

// Reads the keys of one JSON object into fields; remembers the first error.
class ObjectReader {
 public:
  ObjectReader(const json& object, std::string path, std::string file)
      : object_(object), path_(std::move(path)), file_(std::move(file)) {}

  template <class Enum, class Parse>
  void name(const char* key, Enum& out, Parse parse) {
    const json* v = take(key);
    if (v == nullptr) return;
    if (!v->is_string()) return fail(key, "must be a string");
    const auto parsed = parse(v->get<std::string>());
    if (!parsed) return fail(key, fmt::format("'{}' is not a known name", v->get<std::string>()));
    out = *parsed;
  }
  void integer(const char* key, std::int64_t& out) {
    const json* v = take(key);
    if (v == nullptr) return;
    if (!v->is_number_integer()) return fail(key, "must be an integer");
    out = v->get<std::int64_t>();
  }
  void integer(const char* key, int& out) {
    std::int64_t v = out;
    integer(key, v);
    if (v < INT32_MIN || v > INT32_MAX) return fail(key, "is out of range");
    out = static_cast<int>(v);
  }
  void maybe_boolean(const char* key, std::optional<bool>& out) {
    const json* v = take(key);
    if (v == nullptr) return;
    if (v->is_null()) {
      out.reset();
      return;
    }
    if (!v->is_boolean()) return fail(key, "must be true, false or null");
    out = v->get<bool>();
  }
  // A string checked by `check`, which returns an error's reason or nothing.
  template <class Check>
  void checked_text(const char* key, Check check) {
    const json* v = take(key);
    if (v == nullptr) return;
    if (!v->is_string()) return fail(key, "must be a string");
    if (std::optional<std::string> reason = check(v->get<std::string>())) fail(key, *reason);
  }
  // Each key of an object, with its value, through `read(key, value)`, which returns an error's
  // reason or nothing. The keys are the caller's to check.
  template <class Read>
  void entries(const char* key, Read read) {
    const json* v = take(key);
    if (v == nullptr) return;
    if (!v->is_object()) return fail(key, "must be an object");
    for (const auto& [k, value] : v->items()) {
      if (std::optional<std::string> reason = read(k, value)) {
        if (!error_) error_ = bad_input(file_, field(key) + "." + k, *reason);
        return;
      }
    }
  }
  void number(const char* key, double& out) {
    const json* v = take(key);
    if (v == nullptr) return;
    if (!v->is_number() || !std::isfinite(v->get<double>())) {
      return fail(key, "must be a finite number");
    }
    out = v->get<double>();
  }
  void boolean(const char* key, bool& out) {
    const json* v = take(key);
    if (v == nullptr) return;
    if (!v->is_boolean()) return fail(key, "must be true or false");
    out = v->get<bool>();
  }
  void text(const char* key, std::string& out) {
    const json* v = take(key);
    if (v == nullptr) return;
    if (!v->is_string()) return fail(key, "must be a string");
    out = v->get<std::string>();
  }
  void texts(const char* key, std::vector<std::string>& out) {
    const json* v = take(key);
    if (v == nullptr) return;
    if (!v->is_array()) return fail(key, "must be a list of strings");
    out.clear();
    for (const json& e : *v) {
      if (!e.is_string()) return fail(key, "must be a list of strings");
      out.push_back(e.get<std::string>());
    }
  }
  void integers(const char* key, std::vector<std::int64_t>& out) {
    const json* v = take(key);
    if (v == nullptr) return;
    if (!v->is_array()) return fail(key, "must be a list of integers");
    out.clear();
    for (const json& e : *v) {
      if (!e.is_number_integer()) return fail(key, "must be a list of integers");
      out.push_back(e.get<std::int64_t>());
    }
  }
  // A nested object, read by `read` with its own reader.
  template <class Read>
  void object(const char* key, Read read) {
    const json* v = take(key);
    if (v == nullptr) return;
    if (!v->is_object()) return fail(key, "must be an object");
    ObjectReader inner(*v, field(key), file_);
    read(inner);
    if (!error_) error_ = inner.finish();
  }
  // The first error, or one naming a key nobody read.
  std::optional<Error> finish() {
    if (error_) return error_;
    for (const auto& [key, value] : object_.items()) {
      if (std::find(read_.begin(), read_.end(), key) == read_.end()) {
        return bad_input(file_, field(key.c_str()), "is not a plan field (docs/formats.md)");
      }
    }
    return std::nullopt;
  }

 private:
  const json* take(const char* key) {
    read_.emplace_back(key);
    if (error_) return nullptr;
    const auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }
  void fail(const char* key, std::string reason) {
    if (!error_) error_ = bad_input(file_, field(key), std::move(reason));
  }
  std::string field(const char* key) const { return path_.empty() ? key : path_ + "." + key; }

  const json& object_;
  std::string path_;
  std::string file_;
  std::vector<std::string> read_;
  std::optional<Error> error_;
};

constexpr std::int64_t kMaxKnobCount = 1'000'000'000;

// One knob of the "behaviour" object by its name in the knob table (src/plan/knobs.cpp).
std::optional<std::string> read_knob(const std::string& name, const json& value,
                                     std::vector<std::pair<Knob, std::int64_t>>& out) {
  const auto all = knobs();
  const auto it =
      std::find_if(all.begin(), all.end(), [&name](const KnobInfo& k) { return k.name == name; });
  if (it == all.end()) return "is not a framework behaviour (docs/frameworks.md)";
  switch (it->kind) {
    case KnobKind::flag:
      if (!value.is_boolean()) return "must be true or false";
      out.emplace_back(it->knob, value.get<bool>() ? 1 : 0);
      return std::nullopt;
    case KnobKind::count:
      // Chunk counts and positions, layers: a bound far above any real value keeps the ledger's
      // arithmetic (ceil_div(seq, positions)) clear of overflow.
      if (!value.is_number_integer() || value.get<std::int64_t>() < 0 ||
          value.get<std::int64_t>() > kMaxKnobCount) {
        return "must be a whole number from 0 to 1,000,000,000";
      }
      out.emplace_back(it->knob, value.get<std::int64_t>());
      return std::nullopt;
    case KnobKind::load_quantiser: {
      const auto q =
          value.is_string() ? parse_load_quantiser(value.get<std::string>()) : std::nullopt;
      if (!q) return "must be none, lightning_bnb, torchao_unchunked or torchao_chunked";
      out.emplace_back(it->knob, static_cast<std::int64_t>(*q));
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// Every Layout field under the names render's layout_json() writes.
void read_layout(ObjectReader& r, Layout& l) {
  r.integer("gpus_per_node", l.gpus_per_node);
  r.integer("nodes", l.nodes);
  std::optional<Engine> engine;
  r.name("engine", engine, parse_engine);
  r.integer("zero_stage", l.zero_stage);
  r.name("fsdp", l.fsdp, parse_fsdp_mode);
  r.integer("fsdp_version", l.fsdp_version);
  r.integer("tp", l.tp);
  r.boolean("sequence_parallel", l.sequence_parallel);
  r.integer("pp", l.pp);
  r.integer("virtual_stages", l.virtual_stages);
  r.integer("cp", l.cp);
  r.integer("ep", l.ep);
  r.boolean("distributed_optimizer", l.distributed_optimizer);
  r.boolean("offload_optimizer", l.offload_optimizer);
  r.boolean("offload_params", l.offload_params);
  r.name("offload_to", l.offload_to, parse_offload_target);
  r.boolean("pin_memory", l.pin_memory);
  r.number("ddp_bucket_cap_mb", l.ddp_bucket_cap_mb);
  r.boolean("gradient_as_bucket_view", l.gradient_as_bucket_view);
  r.object("deepspeed", [&l](ObjectReader& d) {
    DeepSpeedKnobs& ds = l.deepspeed;
    d.integer("reduce_bucket_size", ds.reduce_bucket_size);
    d.integer("allgather_bucket_size", ds.allgather_bucket_size);
    d.maybe_boolean("overlap_comm", ds.overlap_comm);
    d.boolean("contiguous_gradients", ds.contiguous_gradients);
    d.integer("sub_group_size", ds.sub_group_size);
    d.integer("stage3_prefetch_bucket_size", ds.stage3_prefetch_bucket_size);
    d.integer("stage3_param_persistence_threshold", ds.stage3_param_persistence_threshold);
    d.integer("stage3_max_live_parameters", ds.stage3_max_live_parameters);
    d.boolean("zero_init", ds.zero_init);
  });
  r.object("fsdp_knobs", [&l](ObjectReader& f) {
    FsdpKnobs& k = l.fsdp_knobs;
    f.boolean("limit_all_gathers", k.limit_all_gathers);
    f.boolean("backward_prefetch", k.backward_prefetch);
    f.boolean("forward_prefetch", k.forward_prefetch);
    f.boolean("cpu_ram_efficient_loading", k.cpu_ram_efficient_loading);
    f.boolean("embedding_unit", k.embedding_unit);
    f.boolean("head_unit", k.head_unit);
  });
  l.engine = engine.value_or(implied_engine(l));
}

}  // namespace

Result<TrainingPlan> plan_from_json(std::string_view text, const std::string& file) {
  auto parsed = io::parse_json(text, file);  // depth cap, 1e400, syntax: one-line errors
  if (!parsed) return parsed.error();
  const json& doc = parsed.value();
  if (!doc.is_object()) return bad_input(file, "", "must be a JSON object of plan fields");
  TrainingPlan p;
  ObjectReader r(doc, "", file);
  r.name("method", p.method, parse_method);
  r.name("precision", p.precision, parse_precision);
  r.name("optimizer", p.optimizer, parse_optimizer);
  r.name("optimizer_impl", p.optimizer_impl, parse_optimizer_impl);
  r.integer("batch", p.batch);
  r.integer("seq", p.seq);
  r.integer("grad_accum", p.grad_accum);
  r.name("checkpointing", p.checkpointing, parse_checkpointing);
  r.name("attention", p.attention, parse_attention);
  r.name("loss", p.loss, parse_loss);
  r.name("eval_strategy", p.eval_strategy, parse_eval_strategy);
  r.integer("eval_batch", p.eval_batch);
  r.checked_text("framework", [&p](const std::string& name) -> std::optional<std::string> {
    if (auto e = parse_framework(name, p.framework, p.library_versions)) return e->reason;
    return std::nullopt;
  });
  r.entries("library_versions", [&p](const std::string& library, const json& version) {
    if (!version.is_string()) return std::optional<std::string>("must be a version string");
    const std::string pair = library + "=" + version.get<std::string>();
    if (auto e = parse_library_versions(pair, p.library_versions)) return std::optional(e->reason);
    return std::optional<std::string>();
  });
  // The behaviour beyond the framework profile: applied on top of the profile below.
  std::vector<std::pair<Knob, std::int64_t>> overrides;
  r.entries("behaviour", [&overrides](const std::string& name, const json& value) {
    return read_knob(name, value, overrides);
  });
  r.boolean("cpu_kernels", p.cpu_kernels);
  r.text("alloc_conf", p.alloc_conf);  // checked by validate() below
  r.object("layout", [&p](ObjectReader& l) { read_layout(l, p.layout); });
  r.name("convention", p.convention, parse_convention);
  r.integer("params_override", p.params_override);
  r.object("lora", [&p](ObjectReader& l) {
    l.integer("rank", p.lora.rank);
    l.number("alpha", p.lora.alpha);
    l.number("dropout", p.lora.dropout);
    l.texts("targets", p.lora.targets);
    l.boolean("dora", p.lora.dora);
    l.texts("modules_to_save", p.lora.modules_to_save);
  });
  r.object("quant", [&p](ObjectReader& q) {
    q.name("kind", p.quant.kind, parse_quant);
    q.boolean("double_quant", p.quant.double_quant);
    q.integer("block_size", p.quant.block_size);
    q.boolean("prepare_kbit", p.quant.prepare_kbit);
  });
  r.object("freeze", [&p](ObjectReader& f) {
    f.texts("train_modules", p.freeze.train_modules);
    f.integers("train_layers", p.freeze.train_layers);
  });
  if (auto e = r.finish()) return *e;
  apply_framework(p);
  for (const auto& [knob, value] : overrides) set_knob(p.behaviour, knob, value);
  if (auto e = validate_layout(p.layout)) {
    e->file = file;
    return *e;
  }
  if (auto e = validate(p)) {
    e->file = file;
    return *e;
  }
  return p;
}

}  // namespace trainmem
