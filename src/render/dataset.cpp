// The dataset report: a table of the plan at the records' lengths, the advice, and its JSON
// object (docs/formats.md, "dataset").
#include "render/dataset.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "render/json.h"
#include "trainmem/import.h"
#include "trainmem/render.h"

namespace trainmem {
namespace {

std::string verdict_words(const Fit& f, Unit u) {
  return f.fits ? fmt::format("fits, {} free", format_bytes(f.margin_bytes, u))
                : fmt::format("does not fit, over by {}", format_bytes(-f.margin_bytes, u));
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

nlohmann::json dataset_json(const DatasetFit& d) {
  nlohmann::json j;
  j["file"] = d.file;
  j["format"] = std::string(name_of(d.format));
  j["schemas"] = d.schemas;
  j["records"] = d.records;
  j["text_bytes"] = d.bytes;
  j["non_ascii_bytes"] = d.non_ascii_bytes;
  j["tokens_estimated"] = !d.tokens_exact;
  j["tokens_counted_by"] = d.tokens_exact ? "exact (tokenizer.json)" : "estimate";
  j["vocab_size"] = d.vocab_size;
  j["bytes_per_token"] = static_cast<double>(d.rate.centibytes) / 100.0;
  j["bytes_per_token_band"] = d.rate.band;
  j["bytes_per_token_source"] = d.rate.source;
  j["tokenizer_found"] = d.tokenizer_found;
  j["tokenizer"] = d.tokens_exact ? nlohmann::json(d.tokenizer) : nlohmann::json(nullptr);
  const TokenLengths& l = d.lengths;
  j["tokens"] = {
      {"p50", l.p50}, {"p95", l.p95}, {"max", l.max}, {"mean", l.mean}, {"total", l.total}};
  j["max_length"] = d.max_length ? nlohmann::json(*d.max_length) : nlohmann::json(nullptr);
  j["truncated_records"] = d.truncated_records;
  j["priced"] = nlohmann::json::array();
  for (const DatasetRow& r : d.rows) {
    nlohmann::json row = {{"at", r.at},
                          {"tokens", r.tokens},
                          {"batch", r.batch},
                          {"seq", r.seq},
                          {"truncated", r.seq < r.tokens},
                          {"peak_bytes", r.price.peak_bytes}};
    if (r.price.fit) row["fit"] = fit_json(*r.price.fit);
    j["priced"].push_back(row);
  }
  if (d.p95_truncated_records && d.p95_saves_bytes) {
    std::int64_t p95_seq = 0;
    for (const DatasetRow& r : d.rows) {
      if (r.at == "p95") p95_seq = r.seq;
    }
    j["truncate_at_p95"] = {{"max_length", p95_seq},
                            {"truncated_records", *d.p95_truncated_records},
                            {"saves_bytes", *d.p95_saves_bytes}};
  }
  j["advice"] = d.advice;
  j["notes"] = d.notes;
  return j;
}

}  // namespace

std::string render_dataset_text(const DatasetFit& d, const RenderOptions& options) {
  const Unit u = options.unit;
  std::string out =
      fmt::format("Dataset: {} ({}, {} record{}; text from {})\n", d.file, name_of(d.format),
                  with_commas(d.records), d.records == 1 ? "" : "s", joined(d.schemas));
  const TokenLengths& l = d.lengths;
  out += fmt::format("  Tokens per record{}: p50 {} · p95 {} · max {} · mean {} · total {}\n",
                     d.tokens_exact ? ", exact (tokenizer.json)" : " (estimated)",
                     with_commas(l.p50), with_commas(l.p95), with_commas(l.max),
                     with_commas(l.mean), with_commas(l.total));
  const bool any_fit = !d.rows.empty() && d.rows.front().price.fit.has_value();
  const std::string figure = any_fit ? d.rows.front().price.fit->figure : "peak";
  out += fmt::format("  {:<13}{:>10}  {:>14}  {:>14}{}\n", "At", "tokens", "priced", figure,
                     any_fit ? "  verdict" : "");
  for (const DatasetRow& r : d.rows) {
    const std::string priced =
        fmt::format("{} x {}{}", r.batch, with_commas(r.seq), r.seq < r.tokens ? "*" : "");
    out += fmt::format("  {:<13}{:>10}  {:>14}  {:>14}", r.at, with_commas(r.tokens), priced,
                       format_bytes(r.price.peak_bytes, u));
    if (r.price.fit) out += "  " + verdict_words(*r.price.fit, u);
    out += "\n";
  }
  if (d.max_length && d.truncated_records > 0) {
    out += fmt::format("  * truncated at max_length {}\n", with_commas(*d.max_length));
  }
  for (const std::string& a : d.advice) out += "  - " + a + "\n";
  for (const std::string& n : d.notes) out += "  Note: " + n + "\n";
  return out;
}

std::string render_dataset_json(const DatasetFit& d) {
  return dataset_json(d).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string with_dataset_json(const std::string& document, const DatasetFit& d) {
  nlohmann::json j = nlohmann::json::parse(document);
  j["dataset"] = dataset_json(d);
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace trainmem
