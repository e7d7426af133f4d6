// What users already have: other tools' training configs (--from FILE) read as plan settings, and
// their dataset (--dataset FILE) read as token lengths and priced at them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainmem/device.h"
#include "trainmem/errors.h"
#include "trainmem/plan.h"
#include "trainmem/render.h"

namespace trainmem {

// Importing the configs users already have (--from FILE): TRL SFTConfig / HF TrainingArguments,
// PEFT adapter_config.json, BitsAndBytesConfig / quantization_config, axolotl, LLaMA-Factory,
// torchtune, DeepSpeed and accelerate (src/io/import/, one file per format). The result is a
// plan patch, applied before the command line's flags, and the keys used and ignored.

struct ImportedConfig {
  std::string file;
  std::string format;
  PlanPatch patch;                   // origin "FILE: key", from_file = true
  std::string model;                 // the model the file names, or empty
  std::vector<std::string> used;     // "key -> setting"
  std::vector<std::string> ignored;  // "key (why)"
  // Keys the settings ignore because the layout reader reads them (a ds_config.json's
  // zero_optimization.stage, buckets and offload; accelerate's num_processes).
  std::vector<std::string> for_layout;
  // Layout settings the file states for a distributed run, keyed in the layout vocabulary of a
  // measurement row ("custom_sharded_layers" -> "tok_embeddings,output", "offload" -> "both"):
  // torchtune's recipes. They apply when the flags give a layout they fit (--fsdp, FSDP2).
  PlanPatch layout;
};

// A --from file's text, read as every file trainmem reads (src/io/read_file.h): a missing path,
// a pipe, a device or a folder is refused by name, and so is a file past the config size cap.
Result<std::string> read_training_config(const std::string& path);
// Reads JSON or YAML (by content, not extension), flattens it and applies the best-matching
// format's rules. An unrecognised file is an error naming the formats tried.
Result<ImportedConfig> import_config(const std::string& path);
// The same on text already read; `file` names it.
Result<ImportedConfig> import_config_text(const std::string& text, const std::string& file);

// A training dataset's token lengths (`--dataset FILE`): the records of a JSON-lines, JSON or text
// file, the bytes of the text each one trains on, and its length in tokens: counted by the
// model's tokenizer.json when one is beside the config and trainmem runs it, else estimated from
// the vocabulary's published compression. Pure functions on the file's text; docs/dataset.md.

// jsonl: one JSON object per line. json_array: one JSON array of objects (a .json file that does
// not start with '[' is read as JSON lines, as `Dataset.to_json` and pandas `lines=True` write
// it). text_lines: one record per non-empty line (Hugging Face `load_dataset("text")`'s
// sample_by="line"). Parquet is refused: no Parquet library ships with Debian 12.
enum class DatasetFormat { jsonl, json_array, text_lines };
std::string_view name_of(DatasetFormat f);  // "JSON lines", "JSON array", "text lines"

// The file's text, when it is a regular file of at most kMaxDatasetBytes.
Result<std::string> read_dataset_file(const std::string& path);

// The format from the file name (.jsonl, .json, .txt; .parquet is an error that says how to
// convert it) and, for .json, from the first non-blank byte of `text`.
Result<DatasetFormat> dataset_format_of(const std::string& file, std::string_view text);

// Counts the tokens of one piece of text (a tokenizer.json run on it), or says why it cannot.
using CountTokens = std::function<Result<std::int64_t>(std::string_view)>;

// One record's text: the UTF-8 bytes it trains on and the schema it was read with.
struct DatasetRecords {
  std::vector<std::int64_t> bytes;  // per record, in file order
  // Per record, when read with a CountTokens: the sum of its text pieces' tokens (each message's
  // content, prompt and completion, instruction, input and output counted on its own).
  std::vector<std::int64_t> tokens;
  // The schemas seen, in order of first use: "text", "messages[].content",
  // "conversations[].value", "prompt+completion", "instruction+input+output", "line".
  std::vector<std::string> schemas;
  std::int64_t non_ascii_bytes = 0;  // text bytes >= 0x80: other scripts than English
};

// The records of a dataset file's `text`. Each JSON record is an object with "text"; or
// "messages" / "conversations" (a list of turns; the bytes of every "content" or "value", a
// content list's "text" parts included); or "prompt" + "completion" (strings or lists of turns);
// or "instruction" + "output" with an optional "input". The keys of the chat template and special
// tokens are not counted. Errors name `file`, the line or index, the key and the reason.
// With `count`, each record's tokens are counted too; a count that fails is the error.
Result<DatasetRecords> read_dataset_records(std::string_view text, DatasetFormat format,
                                            const std::string& file,
                                            const CountTokens& count = nullptr);

// Bytes of English text per token for a vocabulary size band, with its source.
struct BytesPerToken {
  std::int64_t centibytes = 0;  // bytes per token x 100 (3.94 -> 394)
  std::string band;             // "vocabulary >= 100,000"
  std::string source;           // where the figure is published
};

struct TokenLengths {
  std::vector<std::int64_t> sorted;  // tokens per record, ascending
  std::int64_t p50 = 0, p95 = 0, max = 0;
  std::int64_t mean = 0;  // rounded up
  std::int64_t total = 0;
};
// Token lengths of `records` (not empty): their counted tokens when they have them, else their
// bytes at `rate`.
TokenLengths token_lengths(const DatasetRecords& records, const BytesPerToken& rate);

// Records longer than `max_length` tokens: those truncated at that length.
std::int64_t records_longer_than(const TokenLengths& lengths, std::int64_t max_length);

// The plan priced at the dataset's lengths (src/verdict/dataset_fit.cpp).

// What a plan costs: the figure its verdict judges (the estimate's: the device total on a CUDA
// card, the peak of live bytes otherwise) and the verdict when a device is given.
struct LengthPrice {
  std::int64_t peak_bytes = 0;
  std::optional<Fit> fit;
};
// Prices a plan the way `estimate` does; the command line passes its own.
using PricePlan = std::function<Result<LengthPrice>(const TrainingPlan&)>;

struct DatasetRow {
  std::string at;           // "p50", "p95", "max", "padding-free mean batch"
  std::int64_t tokens = 0;  // the records' length there
  std::int64_t seq = 0;     // the length priced: tokens capped at max_length
  std::int64_t batch = 0;   // the micro-batch priced (the plan's; 1 for padding-free)
  LengthPrice price;
};

struct DatasetFit {
  std::string file;
  DatasetFormat format = DatasetFormat::jsonl;
  std::vector<std::string> schemas;
  std::int64_t records = 0;
  std::int64_t bytes = 0;  // all records' text
  std::int64_t non_ascii_bytes = 0;
  std::int64_t vocab_size = 0;
  BytesPerToken rate;
  bool tokenizer_found = false;  // a tokenizer.json beside the config
  // True when the lengths were counted by that tokenizer.json (exact); false: estimated at
  // `rate` (no tokenizer.json, or one trainmem does not run: the notes say why).
  bool tokens_exact = false;
  std::string tokenizer;  // the tokenizer.json's summary when it counted ("BPE, ...")
  TokenLengths lengths;
  std::optional<std::int64_t> max_length;  // the plan's seq when the user set it: truncation
  std::int64_t truncated_records = 0;      // longer than max_length
  std::vector<DatasetRow> rows;            // p50, p95, max (and padding-free when priced)
  // Truncating at p95 (when the tail is long): records cut, and the bytes saved at the peak.
  std::optional<std::int64_t> p95_truncated_records;
  std::optional<std::int64_t> p95_saves_bytes;
  std::vector<std::string> advice;  // max_length, packing, padding-free, in words
  std::vector<std::string> notes;   // the estimate's basis
  // One epoch as the run's micro-batches see it (at most kRunSteps): the records in a fixed
  // shuffled order, `batch` per micro-batch, each at the longest of its records (truncated at
  // max_length): GpuOptions::step_lengths for a single-GPU padded plan. Under gradient
  // accumulation each micro-batch is replayed as the event stream's step (every gradient live,
  // then the optimizer's phase), so the optimizer's transients follow every micro-batch.
  std::vector<std::int64_t> step_lengths;
};

// The most micro-batches of a dataset's epoch replayed through the allocator (run_events.h):
// enough for the cache to meet the lengths that matter, and a fraction of a second to replay.
inline constexpr std::int64_t kRunSteps = 500;

// The padded length of each batch of one epoch of `tokens` (per record): the records
// shuffled by Fisher-Yates with std::mt19937_64 seeded 0 (the same order on every platform),
// taken `records_per_step` at a time, each step at its longest record capped at `max_length`,
// at most kRunSteps steps.
std::vector<std::int64_t> epoch_step_lengths(std::vector<std::int64_t> tokens,
                                             std::int64_t records_per_step,
                                             std::optional<std::int64_t> max_length);

struct DatasetSource {
  std::string file;
  std::string_view text;                   // the file's contents
  std::int64_t vocab_size = 0;             // the model's
  std::string tokenizer_file;              // a tokenizer.json beside the config; empty: none
  std::optional<std::int64_t> max_length;  // the plan's seq, when given (flag or --from file)
  std::int64_t context = 0;                // the model's max_position_embeddings; 0: unknown
  Unit unit = Unit::gib;                   // for the sizes in the advice
};

// The tokenizer.json in the folder the model was read from (a config.json's folder, a safetensors
// folder, a Hugging Face cache snapshot) when one exists there; empty for presets and otherwise.
std::string tokenizer_file_beside(const LoadedModel& model);

// Reads the records, estimates their lengths and prices `plan` at p50, p95 and the maximum
// (each capped at max_length), with the advice on max_length, packing and padding-free batching.
Result<DatasetFit> fit_dataset(const DatasetSource& source, const TrainingPlan& plan,
                               const PricePlan& price);

// `advise --dataset`: with `plan` advised at the longest record, truncating at the p95 becomes an
// option (placed among the others by fit and cost) when the tail is long, and every option with a
// shorter sequence says how many records it truncates (src/verdict/dataset_advice.cpp).
void add_dataset_options(const DatasetFit& d, const TrainingPlan& plan, Advice& adv);

}  // namespace trainmem
