// plan_from_json(): a TrainingPlan from the JSON that render_plan_json() writes. Every key is
// optional (the field keeps its default); an unknown key, a wrong type or an unknown name is an
// error naming the key, so a typo is never silently ignored.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "io/json_parse.h"
#include "plan/plan.h"
#include "trainmem/plan.h"

namespace trainmem {
namespace {

using nlohmann::json;

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
  r.text("framework", p.framework);
  r.name("convention", p.convention, parse_convention);
  r.integer("params_override", p.params_override);
  r.object("lora", [&p](ObjectReader& l) {
    l.integer("rank", p.lora.rank);
    l.number("alpha", p.lora.alpha);
    l.number("dropout", p.lora.dropout);
    l.texts("targets", p.lora.targets);
    l.boolean("dora", p.lora.dora);
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
  if (auto e = validate(p)) {
    e->file = file;
    return *e;
  }
  return p;
}

}  // namespace trainmem
