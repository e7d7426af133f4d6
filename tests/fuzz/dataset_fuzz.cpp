// libFuzzer target for --dataset files: the first byte picks the format (JSON lines, JSON array,
// text lines), the rest is the file. Any bytes either give a one-line error naming the file, or
// records whose bytes fit in the input and whose percentiles are ordered; pricing them at a
// stand-in cost never fails.
#include <cstddef>
#include <cstdint>
#include <string>

#include "io/dataset.h"
#include "trainmem/import.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const trainmem::DatasetFormat formats[] = {trainmem::DatasetFormat::jsonl,
                                             trainmem::DatasetFormat::json_array,
                                             trainmem::DatasetFormat::text_lines};
  const trainmem::DatasetFormat format = formats[data[0] % 3];
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto records = trainmem::read_dataset_records(text, format, "fuzz/data.jsonl");
  if (!records.ok()) {
    const trainmem::Error& e = records.error();
    if (e.reason.empty() || e.file != "fuzz/data.jsonl" || e.message().size() > 2048) {
      __builtin_trap();
    }
    return 0;
  }
  std::int64_t sum = 0;
  for (std::int64_t b : records->bytes) {
    if (b < 0) __builtin_trap();
    sum += b;
  }
  if (records->bytes.empty() || sum > static_cast<std::int64_t>(text.size())) __builtin_trap();
  const auto vocab = static_cast<std::int64_t>(data[0]) * 1000;
  const trainmem::TokenLengths l =
      trainmem::token_lengths(*records, trainmem::bytes_per_token_for_vocab(vocab));
  if (!(1 <= l.p50 && l.p50 <= l.p95 && l.p95 <= l.max && l.mean <= l.max)) __builtin_trap();

  trainmem::TrainingPlan plan;
  plan.batch = 1 + data[0] % 4;
  plan.attention = data[0] % 2 ? trainmem::Attention::flash : trainmem::Attention::sdpa;
  const trainmem::DatasetSource source{"fuzz/data.jsonl",
                                       text,
                                       vocab,
                                       "",
                                       data[0] % 5 ? std::optional<std::int64_t>(64) : std::nullopt,
                                       128};
  // The file name says .jsonl: the JSON array and text formats are read through it only above.
  auto priced = trainmem::fit_dataset(source, plan, [](const trainmem::TrainingPlan& p) {
    return trainmem::Result<trainmem::LengthPrice>(trainmem::LengthPrice{p.batch * p.seq, {}});
  });
  if (!priced.ok()) {
    if (priced.error().reason.empty()) __builtin_trap();
    return 0;
  }
  for (const trainmem::DatasetRow& r : priced->rows) {
    if (r.seq < 1 || (source.max_length && r.at != "padding-free" && r.seq > *source.max_length)) {
      __builtin_trap();
    }
  }
  return 0;
}
