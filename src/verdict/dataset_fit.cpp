// A plan priced at a dataset's token lengths, and the advice that follows from them
// (include/trainmem/import.h, docs/dataset.md).
#include "verdict/dataset_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>

#include "io/dataset.h"
#include "io/tokenizer/tokenizer.h"
#include "trainmem/import.h"
#include "trainmem/render.h"

namespace trainmem {
namespace {

// "12.5%": a share of the records, one decimal.
std::string percent_of(std::int64_t part, std::int64_t whole) {
  return fmt::format("{:.1f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

// "1 record", "3 records".
std::string records_word(std::int64_t n) {
  return fmt::format("{} record{}", with_commas(n), n == 1 ? "" : "s");
}

std::int64_t capped(std::int64_t tokens, const std::optional<std::int64_t>& max_length) {
  return max_length ? std::min(tokens, *max_length) : tokens;
}

// Mean record length after truncation at max_length, rounded up.
std::int64_t capped_mean(const TokenLengths& l, const std::optional<std::int64_t>& max_length) {
  std::int64_t sum = 0;
  for (std::int64_t t : l.sorted) sum += capped(t, max_length);
  const auto n = static_cast<std::int64_t>(l.sorted.size());
  return (sum + n - 1) / n;
}

const DatasetRow* row_at(const DatasetFit& d, std::string_view at) {
  for (const DatasetRow& r : d.rows) {
    if (r.at == at) return &r;
  }
  return nullptr;
}

void add_advice(DatasetFit& d, const TrainingPlan& plan, Unit unit) {
  const std::int64_t n = d.records;
  const TokenLengths& l = d.lengths;
  if (d.max_length) {
    d.advice.push_back(
        d.truncated_records > 0
            ? fmt::format("max_length {} truncates {} of {} ({}).", with_commas(*d.max_length),
                          with_commas(d.truncated_records), records_word(n),
                          percent_of(d.truncated_records, n))
            : fmt::format("max_length {} holds every record (the longest is {} tokens).",
                          with_commas(*d.max_length), with_commas(l.max)));
  } else {
    d.advice.push_back(fmt::format(
        "No max_length given (--seq / --max-length): the records are priced untruncated, up to "
        "{} tokens; TRL's SFTConfig truncates at max_length=1024 unless told otherwise.",
        with_commas(l.max)));
  }
  const DatasetRow* p95 = row_at(d, "p95");
  const DatasetRow* max = row_at(d, "max");
  if (d.p95_truncated_records && d.p95_saves_bytes && p95 != nullptr && max != nullptr) {
    d.advice.push_back(fmt::format(
        "max_length = {} (the p95) would truncate {} ({}) and lower the peak by {}, from the "
        "longest record's {} tokens.",
        with_commas(p95->seq), records_word(*d.p95_truncated_records),
        percent_of(*d.p95_truncated_records, n), format_bytes(*d.p95_saves_bytes, unit),
        with_commas(max->seq)));
  }
  // TRL SFTConfig (trl/trainer/sft_config.py): packing groups records into blocks of max_length
  // tokens (strategy "bfd", best-fit decreasing, which also turns padding-free on); padding_free
  // flattens a batch into one sequence and needs FlashAttention 2 or 3; max_length defaults to
  // 1024.
  if (d.max_length) {
    d.advice.push_back(fmt::format(
        "packing=True (TRL): records are packed into blocks of up to max_length = {} tokens "
        "(best-fit decreasing), so a step costs about the peak at {} tokens, the `packed` row.",
        with_commas(*d.max_length), with_commas(*d.max_length)));
  } else {
    d.advice.push_back(
        "packing=True (TRL) packs records into blocks of max_length tokens: give --seq N to "
        "price it (a step then costs about the peak at N tokens).");
  }
  if (plan.batch == 1) {
    d.advice.push_back(
        "padding_free=True (TRL): at batch 1 there is no padding to remove; it changes nothing.");
  } else if (plan.attention != Attention::flash) {
    d.advice.push_back(fmt::format(
        "padding_free=True (TRL) needs FlashAttention 2 or 3 (--attention flash): "
        "a batch becomes one row of its records' real lengths (about {} x {} = {} tokens on "
        "average) instead of {} rows padded to the longest.",
        plan.batch, with_commas(capped_mean(l, d.max_length)),
        with_commas(plan.batch * capped_mean(l, d.max_length)), plan.batch));
  } else {
    d.advice.push_back(
        "padding_free=True (TRL): a batch becomes one row of its records' real lengths "
        "(transformers DataCollatorWithFlattening): the average batch is the `padding-free` row; "
        "a batch of the longest records still costs the `max` row.");
  }
}

}  // namespace

std::vector<std::int64_t> epoch_step_lengths(std::vector<std::int64_t> tokens,
                                             std::int64_t records_per_step,
                                             std::optional<std::int64_t> max_length) {
  // Fisher-Yates from the back; `rng() % (i + 1)` rather than a std distribution, whose output
  // the standard leaves to each library (the bias of the modulo is below 2^-40 here).
  std::mt19937_64 rng(0);
  for (std::size_t i = tokens.size(); i > 1; --i) {
    std::swap(tokens[i - 1], tokens[rng() % i]);
  }
  std::vector<std::int64_t> out;
  const auto per = static_cast<std::size_t>(std::max<std::int64_t>(1, records_per_step));
  for (std::size_t at = 0; at < tokens.size() && std::ssize(out) < kRunSteps; at += per) {
    std::int64_t longest = 1;  // a record of no tokens still trains on one
    for (std::size_t k = at; k < std::min(tokens.size(), at + per); ++k) {
      longest = std::max(longest, capped(tokens[k], max_length));
    }
    out.push_back(longest);
  }
  return out;
}

Result<DatasetFit> fit_dataset(const DatasetSource& source, const TrainingPlan& plan,
                               const PricePlan& price) {
  auto format = dataset_format_of(source.file, source.text);
  if (!format) return format.error();
  // Exact counts when the tokenizer.json beside the config loads and counts every record; else the
  // estimate, with a note that names the file, the field and the reason.
  std::optional<std::string> fallback;
  std::optional<tok::Tokenizer> tokenizer;
  if (!source.tokenizer_file.empty()) {
    auto t = tok::load_tokenizer_file(source.tokenizer_file);
    if (t) {
      tokenizer.emplace(std::move(t).value());
    } else {
      fallback = t.error().message();
    }
  }
  std::optional<Result<DatasetRecords>> counted;
  if (tokenizer) {
    counted = read_dataset_records(source.text, *format, source.file,
                                   [&](std::string_view text) { return tokenizer->count(text); });
  }
  // Without a count, or when counting failed: read again uncounted. A malformed dataset is an
  // error either way; a count that failed on good records is the fallback's reason.
  auto records = counted && *counted ? std::move(*counted).value()
                                     : read_dataset_records(source.text, *format, source.file);
  if (!records) return records.error();
  if (counted && !*counted) fallback = counted->error().message();

  DatasetFit d;
  d.file = source.file;
  d.format = *format;
  d.schemas = records->schemas;
  d.records = static_cast<std::int64_t>(records->bytes.size());
  for (std::int64_t b : records->bytes) d.bytes += b;
  d.non_ascii_bytes = records->non_ascii_bytes;
  d.vocab_size = source.vocab_size;
  d.rate = bytes_per_token_for_vocab(source.vocab_size);
  d.tokenizer_found = !source.tokenizer_file.empty();
  d.tokens_exact = !records->tokens.empty();
  if (d.tokens_exact) d.tokenizer = tokenizer->summary();
  d.lengths = token_lengths(*records, d.rate);
  d.max_length = source.max_length;
  if (d.max_length) d.truncated_records = records_longer_than(d.lengths, *d.max_length);

  auto price_row = [&](std::string at, std::int64_t tokens, std::int64_t batch,
                       std::int64_t seq) -> std::optional<Error> {
    TrainingPlan p = plan;
    p.batch = batch;
    p.seq = std::max<std::int64_t>(seq, 1);  // a record of no tokens still trains on one
    // A record past the engine's sequence range cannot be priced: say which, and how to cut it.
    if (auto e = validate(p)) {
      return bad_input(source.file, at,
                       fmt::format("{} x {} tokens cannot be priced ({}); truncate with "
                                   "--max-length",
                                   batch, with_commas(seq), e->reason));
    }
    auto cost = price(p);
    if (!cost) return cost.error();
    d.rows.push_back({std::move(at), tokens, seq, batch, *cost});
    return std::nullopt;
  };
  const TokenLengths& l = d.lengths;
  for (const auto& [at, tokens] : {std::pair{"p50", l.p50}, {"p95", l.p95}, {"max", l.max}}) {
    if (auto e = price_row(at, tokens, plan.batch, capped(tokens, d.max_length))) return *e;
  }
  if (d.max_length) {
    if (auto e = price_row("packed", *d.max_length, plan.batch, *d.max_length)) return *e;
  }
  if (plan.batch > 1 && plan.attention == Attention::flash) {
    const std::int64_t tokens = plan.batch * capped_mean(l, d.max_length);
    if (auto e = price_row("padding-free", tokens, 1, tokens)) return *e;
  }
  const std::int64_t p95_seq = capped(l.p95, d.max_length);
  const std::int64_t max_seq = capped(l.max, d.max_length);
  if (max_seq * 100 >= p95_seq * kLongTailPercent) {
    d.p95_truncated_records = records_longer_than(l, p95_seq);
    d.p95_saves_bytes = row_at(d, "max")->price.peak_bytes - row_at(d, "p95")->price.peak_bytes;
  }
  add_advice(d, plan, source.unit);
  // One entry per micro-batch: each is collated, padded and run forward and backward on its own
  // (the HF Trainer, TRL and torchtune collate every micro-batch of an accumulating step apart).
  d.step_lengths =
      epoch_step_lengths(l.sorted, std::max<std::int64_t>(1, plan.batch), d.max_length);

  if (d.tokens_exact) {
    d.notes.push_back(fmt::format(
        "Token counts are exact: {} run on every record ({}), as the Hugging Face tokenizers "
        "library's encode(text, add_special_tokens=False) counts them; each message's content is "
        "counted on its own.",
        source.tokenizer_file, d.tokenizer));
  } else {
    if (fallback) {
      d.notes.push_back(fmt::format(
          "The tokenizer.json beside the config is not used, so the counts are estimates: {}.",
          *fallback));
    }
    d.notes.push_back(fmt::format(
        "Token counts are estimated: UTF-8 bytes / {}.{:02d} bytes per token, for vocab_size {} "
        "({}): {}.",
        d.rate.centibytes / 100, d.rate.centibytes % 100, with_commas(d.vocab_size), d.rate.band,
        d.rate.source));
  }
  // More than a tenth of the text outside ASCII: not English, which the figure was measured on.
  if (!d.tokens_exact && d.non_ascii_bytes * 10 > d.bytes) {
    d.notes.push_back(fmt::format(
        "{} of the text's bytes are outside ASCII (other scripts than English): the bytes per "
        "token figure is English's, so these counts are rougher.",
        percent_of(d.non_ascii_bytes, d.bytes)));
  }
  d.notes.push_back(
      "The chat template and special tokens (BOS/EOS, role markers) are not counted: records "
      "with them run a little longer.");
  if (source.context > 0 && capped(l.max, d.max_length) > source.context) {
    d.notes.push_back(
        fmt::format("The longest record priced ({} tokens) is longer than the model's context "
                    "(max_position_embeddings {}).",
                    with_commas(capped(l.max, d.max_length)), with_commas(source.context)));
  }
  return d;
}

}  // namespace trainmem
