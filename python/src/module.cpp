// trainmem._native: the thin native layer of the Python package. It hands plans and documents
// across as JSON text (the library's own round-trip format), so the Python facade
// (python/trainmem/__init__.py) and the command line print the same numbers from the same code.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "trainmem/import.h"
#include "trainmem/trainmem.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace trainmem::python {
namespace {

// Raised to Python as trainmem.TrainmemError (a ValueError) with the library's message.
struct TrainmemException : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <class T>
T unwrap(Result<T> r) {
  if (!r) throw TrainmemException(r.error().message());
  return std::move(r).value();
}

// Keyword arguments as the command line's settings (plan_settings.h): the same defaults (the HF
// Trainer's, then a framework profile's), names, aliases and checks as `trainmem estimate` flags.
// Returns the whole plan as the library's JSON.
// `imported` (key, value, origin) come from a config object (import_settings below) and apply
// first, as `--from` files do, so the keyword arguments override them.
using Imported = std::vector<std::tuple<std::string, std::string, std::string>>;
std::pair<std::string, std::vector<std::string>> plan_from_settings(
    const std::vector<std::pair<std::string, std::string>>& settings, const Imported& imported) {
  PlanPatch patch;
  for (const auto& [key, value, origin] : imported) patch.push_back({key, value, origin, true});
  for (const auto& [key, value] : settings) patch.push_back({key, value, key, false});
  PlanResult r = unwrap(plan_from(patch));
  return {render_plan_json(r.plan), std::move(r.notes)};
}

// A config object's fields as JSON text (TrainingArguments / SFTConfig, LoraConfig,
// BitsAndBytesConfig: their to_dict()), read as `trainmem estimate --from` reads a file of them:
// (settings, format, used, ignored, model). Errors name `name`.
std::tuple<Imported, std::string, std::vector<std::string>, std::vector<std::string>, std::string>
import_settings(const std::string& json_text, const std::string& name) {
  ImportedConfig c = unwrap(import_config_text(json_text, name));
  Imported settings;
  for (const PlanSetting& s : c.patch) settings.emplace_back(s.key, s.value, s.origin);
  return {settings, c.format, c.used, c.ignored, c.model};
}

TrainingPlan plan_of(const std::string& plan_json) {
  return unwrap(plan_from_json(plan_json, "plan"));
}

// The plan of a call that prices it on `model`: refused as the command line refuses it
// (check_plan_for_model: the layout, the layers and LoRA targets it names, the size rule).
TrainingPlan plan_for(const LoadedModel& model, const std::string& plan_json) {
  TrainingPlan plan = plan_of(plan_json);
  if (auto e = check_plan_for_model(model, plan)) throw TrainmemException(e->message());
  return plan;
}

// The device a call names: a database id (`device`), or a size with a unit (`memory`), with an
// optional reserve; neither gives no device.
std::optional<Device> device_of(const std::optional<std::string>& device,
                                const std::optional<std::string>& memory,
                                const std::optional<std::string>& reserve) {
  if (device && memory) throw TrainmemException("give either device or memory, not both");
  std::optional<Device> d;
  if (device) d = unwrap(find_device(*device));
  if (memory) d = custom_device(unwrap(parse_size(*memory, "memory")));
  if (reserve) {
    if (!d) throw TrainmemException("reserve: needs a device or memory");
    d = unwrap(with_reserve(*d, unwrap(parse_size(*reserve, "reserve"))));
  }
  return d;
}

// `trainmem estimate --dataset FILE`: the plan priced at the records' p50, p95 and longest
// (tokens counted by a tokenizer.json beside the model's config, else estimated), truncated at the
// plan's seq when the caller set it (`max_length_given`). Priced as estimate prices one GPU.
DatasetFit dataset_fit(const LoadedModel& model, const TrainingPlan& plan,
                       const std::optional<Device>& d, const std::string& file,
                       bool max_length_given) {
  const std::string text = unwrap(read_dataset_file(file));
  DatasetSource source;
  source.file = file;
  source.text = text;
  source.vocab_size = model.spec.vocab;
  source.tokenizer_file = tokenizer_file_beside(model);
  if (max_length_given) source.max_length = plan.seq;
  source.context = model.spec.max_positions;
  return unwrap(fit_dataset(source, plan, [&](const TrainingPlan& p) -> Result<LengthPrice> {
    const Ledger ledger = estimate(model, p);
    LengthPrice out;
    out.peak_bytes = totals(ledger).peak_bytes;
    if (!d) return out;
    auto f = judge(model, p, ledger, *d, gpu_options_for(*d, p));
    if (!f) return f.error();
    out.fit = *f;
    out.peak_bytes = f->peak_bytes;
    return out;
  }));
}

std::string estimate_document(const LoadedModel& model, const TrainingPlan& plan,
                              const Ledger& ledger, const std::optional<Device>& d,
                              std::vector<std::int64_t> step_lengths = {}) {
  // As `trainmem estimate --json`: the allocator replay's figures (not on Apple unified memory),
  // over a dataset's batches when given, and the verdict judge() gives.
  GpuOptions o = gpu_options_for(d, plan);
  o.step_lengths = std::move(step_lengths);
  const GpuEstimate gpu = unwrap(gpu_estimate(model, plan, ledger, o));
  const bool cuda = !d || d->kind != DeviceKind::unified;
  if (!d) return render_json(ledger, nullptr, &gpu);
  const Fit f = judge(gpu, totals(ledger), *d);
  return render_json(ledger, &f, cuda ? &gpu : nullptr);
}

// The notes a report opens with, as the command line's (read_pricing_inputs): what the config
// objects gave and the defaults the plan took (`notes`, from Python), then what the plan means on
// this model and device (plan_notes: loading dtype, config defaults, targets left unmatched).
std::vector<std::string> report_notes(std::vector<std::string> notes, const LoadedModel& model,
                                      const TrainingPlan& plan, const std::optional<Device>& d) {
  for (std::string& n : plan_notes(model, plan, d ? &*d : nullptr)) notes.push_back(std::move(n));
  return notes;
}

// A plan spread over GPUs, as `trainmem estimate --gpus N ...` prices it: judge_distributed(),
// the most-loaded rank replayed and judged like one GPU, the report's notes first.
DistributedVerdict distributed_verdict(const LoadedModel& model, const TrainingPlan& plan,
                                       const std::optional<Device>& d,
                                       const std::vector<std::string>& notes) {
  DistributedVerdict v = unwrap(judge_distributed(model, plan, d, gpu_options_for(d, plan)));
  v.estimate.notes.insert(v.estimate.notes.begin(), notes.begin(), notes.end());
  return v;
}

// One GPU's ledger, the report's notes first (as `trainmem estimate` prints them).
Ledger noted_estimate(const LoadedModel& model, const TrainingPlan& plan,
                      const std::vector<std::string>& notes) {
  Ledger ledger = estimate(model, plan);
  ledger.notes.insert(ledger.notes.begin(), notes.begin(), notes.end());
  return ledger;
}

std::string estimate_json(const LoadedModel& model, const std::string& plan_json,
                          const std::optional<std::string>& device,
                          const std::optional<std::string>& memory,
                          const std::optional<std::string>& reserve,
                          const std::optional<std::string>& dataset, bool max_length_given,
                          const std::vector<std::string>& notes) {
  const TrainingPlan plan = plan_for(model, plan_json);
  const std::optional<Device> d = device_of(device, memory, reserve);
  const std::vector<std::string> all = report_notes(notes, model, plan, d);
  if (!is_single_device(plan.layout)) {
    if (dataset) {
      throw TrainmemException(
          "dataset: priced on one GPU from Python; for a layout use `trainmem estimate "
          "--dataset FILE --gpus N ...`");
    }
    const DistributedVerdict v = distributed_verdict(model, plan, d, all);
    const bool cuda = !d || d->kind != DeviceKind::unified;
    return render_distributed_json(v.estimate, v.fit ? &*v.fit : nullptr, cuda ? &v.gpu : nullptr);
  }
  const Ledger ledger = noted_estimate(model, plan, all);
  if (dataset) {
    const DatasetFit fit = dataset_fit(model, plan, d, *dataset, max_length_given);
    return with_dataset_json(estimate_document(model, plan, ledger, d, fit.step_lengths), fit);
  }
  return estimate_document(model, plan, ledger, d);
}

std::string report_text(const LoadedModel& model, const std::string& plan_json,
                        const std::optional<std::string>& device,
                        const std::optional<std::string>& memory,
                        const std::optional<std::string>& reserve, const std::string& unit,
                        bool explain, const std::optional<std::string>& dataset,
                        bool max_length_given, const std::vector<std::string>& notes) {
  RenderOptions options;
  const auto u = parse_unit(unit);
  if (!u) throw TrainmemException("unit: '" + unit + "' is not one of: gib, gb, mib, bytes");
  options.unit = *u;
  const TrainingPlan plan = plan_for(model, plan_json);
  const std::optional<Device> d = device_of(device, memory, reserve);
  const std::vector<std::string> all = report_notes(notes, model, plan, d);
  if (!is_single_device(plan.layout)) {
    const DistributedVerdict v = distributed_verdict(model, plan, d, all);
    const bool cuda = !d || d->kind != DeviceKind::unified;
    if (explain) return render_distributed_explain(v.estimate, options, cuda ? &v.gpu : nullptr);
    std::string out = render_distributed_text(v.estimate, v.fit ? &*v.fit : nullptr, options);
    if (cuda && v.gpu.available) out += "\nMost-loaded rank " + render_gpu_text(v.gpu, options);
    return out;
  }
  const Ledger ledger = noted_estimate(model, plan, all);
  // As `trainmem estimate --dataset`: the allocator replayed over the dataset's batches, and the
  // dataset's section after the report.
  std::optional<DatasetFit> data;
  if (dataset) data = dataset_fit(model, plan, d, *dataset, max_length_given);
  const std::string dataset_text = data ? "\n" + render_dataset_text(*data, options) : "";
  GpuOptions o = gpu_options_for(d, plan);
  if (data) o.step_lengths = data->step_lengths;
  const GpuEstimate gpu = unwrap(gpu_estimate(model, plan, ledger, o));
  const bool cuda = !d || d->kind != DeviceKind::unified;
  if (explain) {
    return render_explain(ledger, options, cuda && gpu.available ? &gpu : nullptr) + dataset_text;
  }
  std::optional<Fit> f;
  if (d) f = judge(gpu, totals(ledger), *d);
  std::string out = render_text(ledger, f ? &*f : nullptr, options);
  if (cuda && gpu.available) out += "\n" + render_gpu_text(gpu, options);
  return out + dataset_text;
}

std::string solve_json(const LoadedModel& model, const std::string& plan_json,
                       const std::string& target, const std::optional<std::string>& device,
                       const std::optional<std::string>& memory, std::optional<std::int64_t> step) {
  const auto goal = parse_solve_for(target);
  if (!goal) {
    throw TrainmemException("for: '" + target +
                            "' is not one of: max-batch, max-seq, smallest-gpu, smallest-tier");
  }
  const TrainingPlan plan = plan_for(model, plan_json);
  if (!is_single_device(plan.layout)) {
    throw TrainmemException(
        "layout: solve prices one GPU; for a layout use `trainmem solve --for "
        "min-gpus` or estimate() with the layout");
  }
  SolveOptions options;
  options.step = step.value_or(default_solve_step(*goal));
  const SolveResult r =
      unwrap(solve(model, plan, device_of(device, memory, std::nullopt), *goal, options));
  return render_solve_json(r, model.spec.name, options.step);
}

// `trainmem advise --dataset FILE`: the plan advised at the longest record (after max_length),
// truncating at the p95 an option when the tail is long, each shorter-sequence option's truncated
// records in its cost, and the "dataset" report; priced as advise() judges a plan.
std::string advise_json(const LoadedModel& model, const std::string& plan_json,
                        const std::optional<std::string>& device,
                        const std::optional<std::string>& memory,
                        const std::optional<std::string>& dataset, bool max_length_given) {
  const std::optional<Device> d = device_of(device, memory, std::nullopt);
  if (!d) throw TrainmemException("advise needs a device or memory");
  TrainingPlan plan = plan_for(model, plan_json);
  if (!dataset) {
    // As `trainmem advise`: the changes on one GPU, then more GPUs when one is not enough.
    Advice adv = advise(model, plan, *d);
    add_layout_options(model, plan, *d, adv);
    return render_advice_json(adv, model.spec.name);
  }
  const std::string text = unwrap(read_dataset_file(*dataset));
  DatasetSource source;
  source.file = *dataset;
  source.text = text;
  source.vocab_size = model.spec.vocab;
  source.tokenizer_file = tokenizer_file_beside(model);
  if (max_length_given) source.max_length = plan.seq;
  source.context = model.spec.max_positions;
  const DatasetFit fit =
      unwrap(fit_dataset(source, plan, [&](const TrainingPlan& p) -> Result<LengthPrice> {
        if (auto e = check_plan_size(model, p)) return *e;
        const Fit f = judge(model, p, *d);
        return LengthPrice{f.peak_bytes, f};
      }));
  for (const DatasetRow& r : fit.rows) {
    if (r.at == "max") plan.seq = r.seq;
  }
  Advice adv = advise(model, plan, *d);
  add_dataset_options(fit, plan, adv);
  add_layout_options(model, plan, *d, adv);
  return with_dataset_json(render_advice_json(adv, model.spec.name), fit);
}

LoadedModel from_tensors(
    const std::string& config_json,
    const std::vector<std::tuple<std::string, std::string, std::vector<std::int64_t>>>& tensors,
    const std::string& name) {
  std::vector<NamedTensor> named;
  named.reserve(tensors.size());
  for (const auto& [tensor_name, dtype, shape] : tensors) {
    named.push_back({.name = tensor_name, .dtype = dtype, .shape = shape});
  }
  return unwrap(model_from_tensors(config_json, named, name));
}

}  // namespace
}  // namespace trainmem::python

NB_MODULE(_native, m) {
  using namespace trainmem;
  using namespace trainmem::python;
  nb::exception<TrainmemException>(m, "TrainmemError", PyExc_ValueError);
  m.attr("__version__") = std::string(kVersion);

  nb::class_<LoadedModel>(m, "Model")
      .def_prop_ro("name", [](const LoadedModel& x) { return x.spec.name; })
      .def_prop_ro("model_type", [](const LoadedModel& x) { return x.spec.model_type; })
      .def_prop_ro("source",
                   [](const LoadedModel& x) { return std::string(source_kind_name(x.source)); })
      .def_prop_ro("source_detail", [](const LoadedModel& x) { return x.source_detail; })
      .def_prop_ro("params_total", [](const LoadedModel& x) { return params_total(x.inventory); })
      .def_prop_ro("params_active",
                   [](const LoadedModel& x) { return params_active(x.inventory, x.spec); })
      .def_prop_ro("notes", [](const LoadedModel& x) { return x.notes; });

  m.def(
      "load", [](const std::string& ref) { return unwrap(load_model(ref)); }, "ref"_a);
  m.def(
      "from_config",
      [](const std::string& config_json, const std::string& name) {
        return unwrap(model_from_config_text(config_json, name));
      },
      "config_json"_a, "name"_a);
  m.def("from_tensors", &from_tensors, "config_json"_a, "tensors"_a, "name"_a);
  m.def("default_plan", [] { return render_plan_json(hf_trainer_defaults()); });
  m.def("plan_from_settings", &plan_from_settings, "settings"_a, "imported"_a = Imported{});
  m.def("import_settings", &import_settings, "json_text"_a, "name"_a);
  m.def(
      "check_plan",
      [](const std::string& plan_json) { return render_plan_json(plan_of(plan_json)); },
      "plan_json"_a);
  m.def("estimate", &estimate_json, "model"_a, "plan_json"_a, "device"_a = nb::none(),
        "memory"_a = nb::none(), "reserve"_a = nb::none(), "dataset"_a = nb::none(),
        "max_length_given"_a = false, "notes"_a = std::vector<std::string>{});
  m.def("report", &report_text, "model"_a, "plan_json"_a, "device"_a = nb::none(),
        "memory"_a = nb::none(), "reserve"_a = nb::none(), "unit"_a = "gib", "explain"_a = false,
        "dataset"_a = nb::none(), "max_length_given"_a = false,
        "notes"_a = std::vector<std::string>{});
  m.def("solve", &solve_json, "model"_a, "plan_json"_a, "target"_a, "device"_a = nb::none(),
        "memory"_a = nb::none(), "step"_a = nb::none());
  m.def("advise", &advise_json, "model"_a, "plan_json"_a, "device"_a = nb::none(),
        "memory"_a = nb::none(), "dataset"_a = nb::none(), "max_length_given"_a = false);
  m.def("devices", [] { return render_devices_json(list_devices()); });
  m.def("models", [] { return render_models_json(list_models()); });
}
