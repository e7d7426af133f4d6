// Records of a dataset file and their bytes of text (include/trainmem/import.h).
#include "io/dataset.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "io/json_parse.h"
#include "io/read_file.h"
#include "trainmem/import.h"

namespace trainmem {
namespace {

using nlohmann::json;

bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string_view kind_of(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "a list";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "a number";
    case json::value_t::binary:
    case json::value_t::discarded:
      return "not text";
  }
  return "not text";
}

// Where a record sits, for errors: "line 3" in JSON lines, "[2]" in a JSON array.
struct Where {
  const std::string& file;
  std::string at;
  std::int64_t* non_ascii = nullptr;   // bytes >= 0x80 of the text read, summed here
  const CountTokens* count = nullptr;  // when given: each text piece's tokens, summed in `tokens`
  std::int64_t* tokens = nullptr;
  Error error(const std::string& key, const std::string& reason) const {
    return bad_input(file, key.empty() ? at : at + ": " + key, reason);
  }
};

std::int64_t count_non_ascii(std::string_view text) {
  return std::count_if(text.begin(), text.end(),
                       [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
}

// The bytes of a string value, or an error naming the key.
Result<std::int64_t> string_bytes(const json& v, const std::string& key, const Where& w) {
  if (!v.is_string()) {
    return w.error(key, fmt::format("expected a string, got {}", kind_of(v)));
  }
  const std::string& text = v.get_ref<const std::string&>();
  if (w.non_ascii != nullptr) *w.non_ascii += count_non_ascii(text);
  if (w.count != nullptr && *w.count && w.tokens != nullptr) {
    auto n = (*w.count)(text);
    if (!n) return w.error(key, "counting its tokens: " + n.error().message());
    *w.tokens += *n;
  }
  return static_cast<std::int64_t>(text.size());
}

// A turn's text: "content" (a string, or a list of parts whose "text" counts: the HF chat
// format's multimodal content) or "value" (ShareGPT). A turn with neither is an error.
Result<std::int64_t> turn_bytes(const json& turn, const std::string& key, const Where& w) {
  if (!turn.is_object()) {
    return w.error(key, fmt::format("expected a turn object, got {}", kind_of(turn)));
  }
  if (const auto c = turn.find("content"); c != turn.end()) {
    if (!c->is_array()) return string_bytes(*c, key + ".content", w);
    std::int64_t sum = 0;
    for (std::size_t i = 0; i < c->size(); ++i) {
      const json& part = (*c)[i];
      if (!part.is_object()) {
        return w.error(fmt::format("{}.content[{}]", key, i),
                       fmt::format("expected a content part object, got {}", kind_of(part)));
      }
      const auto t = part.find("text");
      if (t == part.end()) continue;  // an image or audio part: no text tokens counted
      auto b = string_bytes(*t, fmt::format("{}.content[{}].text", key, i), w);
      if (!b) return b.error();
      sum += *b;
    }
    return sum;
  }
  if (const auto v = turn.find("value"); v != turn.end())
    return string_bytes(*v, key + ".value", w);
  return w.error(key, "a turn has neither \"content\" nor \"value\"");
}

// A list of turns, or a string (prompt and completion may be either).
Result<std::int64_t> turns_or_string_bytes(const json& v, const std::string& key, const Where& w) {
  if (v.is_string()) return string_bytes(v, key, w);
  if (!v.is_array()) {
    return w.error(key, fmt::format("expected a string or a list of turns, got {}", kind_of(v)));
  }
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    auto b = turn_bytes(v[i], fmt::format("{}[{}]", key, i), w);
    if (!b) return b.error();
    sum += *b;
  }
  return sum;
}

struct RecordText {
  std::int64_t bytes = 0;
  std::string schema;
};

constexpr std::string_view kKeysLookedFor =
    "\"text\", \"messages\", \"conversations\", \"prompt\"+\"completion\", "
    "\"instruction\"+\"output\" (+\"input\")";

// One record's text, by the first schema whose keys it has (TRL's dataset formats: language
// modeling "text", conversational "messages", prompt-completion; ShareGPT "conversations";
// Alpaca "instruction"/"input"/"output").
Result<RecordText> record_text(const json& r, const Where& w) {
  if (!r.is_object()) {
    return w.error("", fmt::format("expected a JSON object, got {}", kind_of(r)));
  }
  if (const auto t = r.find("text"); t != r.end()) {
    auto b = string_bytes(*t, "text", w);
    if (!b) return b.error();
    return RecordText{*b, "text"};
  }
  for (const char* key : {"messages", "conversations"}) {
    const auto m = r.find(key);
    if (m == r.end()) continue;
    if (!m->is_array()) {
      return w.error(key, fmt::format("expected a list of turns, got {}", kind_of(*m)));
    }
    auto b = turns_or_string_bytes(*m, key, w);
    if (!b) return b.error();
    return RecordText{
        *b, std::string(key) + (std::string(key) == "messages" ? "[].content" : "[].value")};
  }
  if (r.contains("prompt") && r.contains("completion")) {
    auto p = turns_or_string_bytes(r.at("prompt"), "prompt", w);
    if (!p) return p.error();
    auto c = turns_or_string_bytes(r.at("completion"), "completion", w);
    if (!c) return c.error();
    return RecordText{*p + *c, "prompt+completion"};
  }
  if (r.contains("instruction") && r.contains("output")) {
    std::int64_t sum = 0;
    for (const char* key : {"instruction", "input", "output"}) {
      const auto v = r.find(key);
      if (v == r.end()) continue;
      auto b = string_bytes(*v, key, w);
      if (!b) return b.error();
      sum += *b;
    }
    return RecordText{sum, "instruction+input+output"};
  }
  std::string keys;
  for (const auto& [k, v] : r.items()) {
    if (keys.size() > 200) {
      keys += ", ...";
      break;
    }
    keys += (keys.empty() ? "" : ", ") + ("\"" + k + "\"");
  }
  return w.error("", fmt::format("no text field: looked for {}; the record has {}", kKeysLookedFor,
                                 keys.empty() ? "no keys" : keys));
}

void add(DatasetRecords& out, const RecordText& t) {
  out.bytes.push_back(t.bytes);
  for (const std::string& s : out.schemas) {
    if (s == t.schema) return;
  }
  out.schemas.push_back(t.schema);
}

// Byte offset of the first byte that is not UTF-8 text (a NUL, or an invalid sequence), or npos.
std::size_t first_non_text_byte(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == 0) return i;
    int extra = 0;
    if (c < 0x80) {
      extra = 0;
    } else if (c >= 0xC2 && c <= 0xDF) {
      extra = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      extra = 2;
    } else if (c >= 0xF0 && c <= 0xF4) {
      extra = 3;
    } else {
      return i;
    }
    if (i + extra >= s.size()) return i;  // a sequence cut short by the end of the file
    for (int k = 1; k <= extra; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return i;
    }
    i += 1 + extra;
  }
  return std::string_view::npos;
}

// Calls `fn(line, line_number)` for each line that is not blank; a trailing '\r' is dropped.
template <class Fn>
std::optional<Error> for_each_line(std::string_view text, Fn fn) {
  std::size_t start = 0;
  std::int64_t number = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") != std::string_view::npos) {
      if (auto e = fn(line, number)) return e;
    }
    if (end == text.size()) break;
    start = end + 1;
  }
  return std::nullopt;
}

}  // namespace

std::string_view name_of(DatasetFormat f) {
  switch (f) {
    case DatasetFormat::jsonl:
      return "JSON lines";
    case DatasetFormat::json_array:
      return "JSON array";
    case DatasetFormat::text_lines:
      return "text lines";
  }
  return "?";
}

Result<std::string> read_dataset_file(const std::string& path) {
  // Refuse by name (.parquet, .csv, ...) before reading up to a gigabyte.
  if (auto by_name = dataset_format_of(path, ""); !by_name) return by_name.error();
  return io::read_regular_file(path, kMaxDatasetBytes,
                               "a sample of it (shuf -n 100000 FILE > sample.jsonl)");
}

Result<DatasetFormat> dataset_format_of(const std::string& file, std::string_view text) {
  const std::string name = lower(file);
  if (ends_with(name, ".parquet") || text.substr(0, 4) == "PAR1") {
    return bad_input(
        file, "",
        "Parquet is not read (Debian 12 has no Parquet library); convert it to JSON lines: "
        "python -c \"import pandas as pd; pd.read_parquet('FILE.parquet')"
        ".to_json('FILE.jsonl', orient='records', lines=True)\"");
  }
  if (ends_with(name, ".jsonl") || ends_with(name, ".ndjson")) return DatasetFormat::jsonl;
  if (ends_with(name, ".txt")) return DatasetFormat::text_lines;
  if (ends_with(name, ".json")) {
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    const bool array = first != std::string_view::npos && text[first] == '[';
    return array ? DatasetFormat::json_array : DatasetFormat::jsonl;
  }
  return bad_input(file, "",
                   "a dataset is a .jsonl, .json or .txt file (one record per line; .parquet: "
                   "convert to JSON lines)");
}

Result<DatasetRecords> read_dataset_records(std::string_view text, DatasetFormat format,
                                            const std::string& file, const CountTokens& count) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a UTF-8 byte-order mark
  DatasetRecords out;
  std::optional<Error> failed;
  switch (format) {
    case DatasetFormat::text_lines: {
      if (const std::size_t at = first_non_text_byte(text); at != std::string_view::npos) {
        return bad_input(file, "",
                         fmt::format("is not UTF-8 text (byte {} is 0x{:02x})", at,
                                     static_cast<unsigned char>(text[at])));
      }
      failed = for_each_line(text, [&](std::string_view line, std::int64_t number) {
        add(out, RecordText{static_cast<std::int64_t>(line.size()), "line"});
        out.non_ascii_bytes += count_non_ascii(line);
        if (count) {
          auto n = count(line);
          if (!n) {
            return std::optional<Error>{bad_input(file, fmt::format("line {}", number),
                                                  "counting its tokens: " + n.error().message())};
          }
          out.tokens.push_back(*n);
        }
        return std::optional<Error>{};
      });
      break;
    }
    case DatasetFormat::jsonl: {
      failed = for_each_line(
          text, [&](std::string_view line, std::int64_t number) -> std::optional<Error> {
            std::int64_t tokens = 0;
            const Where w{file, fmt::format("line {}", number), &out.non_ascii_bytes, &count,
                          &tokens};
            auto j = io::parse_json(line, file, w.at);
            if (!j) return j.error();
            auto t = record_text(*j, w);
            if (!t) return t.error();
            add(out, *t);
            if (count) out.tokens.push_back(tokens);
            return std::nullopt;
          });
      break;
    }
    case DatasetFormat::json_array: {
      auto j = io::parse_json(text, file);
      if (!j) return j.error();
      if (!j->is_array()) {
        return bad_input(file, "",
                         fmt::format("expected a JSON array of records, got {}", kind_of(*j)));
      }
      for (std::size_t i = 0; i < j->size() && !failed; ++i) {
        std::int64_t tokens = 0;
        auto t = record_text(
            (*j)[i], Where{file, fmt::format("[{}]", i), &out.non_ascii_bytes, &count, &tokens});
        if (!t) {
          failed = t.error();
        } else {
          add(out, *t);
          if (count) out.tokens.push_back(tokens);
        }
      }
      break;
    }
  }
  if (failed) return *failed;
  if (out.bytes.empty()) return bad_input(file, "", "holds no records");
  return out;
}

BytesPerToken bytes_per_token_for_vocab(std::int64_t vocab_size) {
  // "The Llama 3 Herd of Models" (arXiv:2407.21783), section 3.2: "Compared to the Llama 2
  // tokenizer, our new tokenizer improves compression rates on a sample of English data from 3.17
  // to 3.94 characters per token" (Llama 2: 32,000 tokens; Llama 3: 128,256). English is one byte
  // per character, so characters per token = bytes per token. Vocabularies from 100,000 up
  // (Llama 3, Qwen2/2.5/3 at 151,936, Gemma at 256,000) take Llama 3's figure; smaller ones
  // (Llama 2, Mistral 32,768, GPT-2 50,257, Phi-3) take Llama 2's.
  constexpr std::int64_t kLargeVocab = 100'000;
  if (vocab_size >= kLargeVocab) {
    return {394, "vocabulary >= 100,000",
            "Llama 3's 128k tokenizer on English: 3.94 characters per token (Llama 3 paper, "
            "arXiv:2407.21783, section 3.2)"};
  }
  return {317, "vocabulary < 100,000",
          "Llama 2's 32k tokenizer on English: 3.17 characters per token (Llama 3 paper, "
          "arXiv:2407.21783, section 3.2)"};
}

std::int64_t estimated_tokens(std::int64_t bytes, const BytesPerToken& rate) {
  // bytes x 100 must fit in 64 bits: a file's records are at most 1 GiB; past 2^63 / 100 the
  // count is 1% short at worst, far past any sequence the engine prices.
  if (bytes > std::numeric_limits<std::int64_t>::max() / 100) return bytes / rate.centibytes * 100;
  const std::int64_t t = (bytes * 100 + rate.centibytes - 1) / rate.centibytes;
  return t < 1 ? 1 : t;
}

std::int64_t percentile_nearest_rank(const std::vector<std::int64_t>& sorted, int percent) {
  const auto n = static_cast<std::int64_t>(sorted.size());
  std::int64_t rank = (percent * n + 99) / 100;  // ceil(percent / 100 x n)
  if (rank < 1) rank = 1;
  return sorted[static_cast<std::size_t>(rank - 1)];
}

TokenLengths token_lengths(const DatasetRecords& records, const BytesPerToken& rate) {
  TokenLengths out;
  out.sorted.reserve(records.bytes.size());
  if (records.tokens.size() == records.bytes.size()) {
    out.sorted = records.tokens;  // counted by a tokenizer: exact
  } else {
    for (std::int64_t b : records.bytes) out.sorted.push_back(estimated_tokens(b, rate));
  }
  std::sort(out.sorted.begin(), out.sorted.end());
  for (std::int64_t t : out.sorted) out.total += t;
  const auto n = static_cast<std::int64_t>(out.sorted.size());
  out.p50 = percentile_nearest_rank(out.sorted, 50);
  out.p95 = percentile_nearest_rank(out.sorted, 95);
  out.max = out.sorted.back();
  out.mean = (out.total + n - 1) / n;
  return out;
}

std::int64_t records_longer_than(const TokenLengths& lengths, std::int64_t max_length) {
  const auto first_longer =
      std::upper_bound(lengths.sorted.begin(), lengths.sorted.end(), max_length);
  return static_cast<std::int64_t>(lengths.sorted.end() - first_longer);
}

}  // namespace trainmem
