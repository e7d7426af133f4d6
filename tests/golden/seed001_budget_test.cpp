// Seed 001's four memory budgets, as the CLI renders them in the textbook convention with
// --units gb: the key numbers of the text report and of the JSON document, to the digits the seed
// prints. Also `trainmem table`: every value of the seed's per-tier table.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace trainmem {
namespace {

std::string run_cli(const std::string& args) {
  const std::string cmd = std::string(TRAINMEM_CLI) + " " + args + " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  std::string out;
  std::array<char, 4096> buf{};
  while (pipe && std::fgets(buf.data(), static_cast<int>(buf.size()), pipe.get())) {
    out += buf.data();
  }
  return out;
}

// The number that follows `label` in `text` (skipping spaces and bar characters), or NaN.
double number_after(const std::string& text, const std::string& label) {
  const auto at = text.find(label);
  if (at == std::string::npos) return std::nan("");
  std::size_t i = at + label.size();
  while (i < text.size() && !(std::isdigit(static_cast<unsigned char>(text[i])) != 0)) ++i;
  return std::stod(text.substr(i));
}

double round1(double v) {
  return std::round(v * 10) / 10;
}

struct Budget {
  const char* name;
  const char* args;
  double static_gb;       // the seed's fixed part
  double activations_gb;  // activations and logits, to one decimal
  bool fits;
  double margin_gb;  // free (fits) or over budget, to one decimal
};

const Budget kBudgets[] = {
    // Qwen3-1.7B full fine-tune on a 32 GB machine: 27.2 + 0.4, free 4.4.
    {"qwen3_1p7b_full_32gb", "Qwen/Qwen3-1.7B --memory 32GB", 27.2, 0.4, true, 4.4},
    // Qwen3-8B full fine-tune on 128 GB: 131.2 + 0.6 = 131.8 requested, 3.8 over.
    {"qwen3_8b_full_128gb", "Qwen/Qwen3-8B --memory 128GB", 131.2, 0.6, false, 3.8},
    // Qwen3-8B LoRA r=16 on 24 GB with a 2 GB reserve: 16.4 + 0.7 + 0.6 + 2, free 4.3.
    {"qwen3_8b_lora_24gb", "Qwen/Qwen3-8B --method lora --memory 24GB --reserve 2GB", 17.1, 0.6,
     true, 4.3},
    // Qwen3-30B-A3B QLoRA r=16 on a 32 GB unified machine, 4 GB OS reserve: 16.8 + 0.5 + 0.5 +
    // 4, free 10.2.
    {"qwen3_30b_a3b_qlora_32gb", "Qwen/Qwen3-30B-A3B --method qlora --memory 32GB --reserve 4GB",
     17.3, 0.5, true, 10.2},
};

class SeedBudget : public ::testing::TestWithParam<Budget> {};

TEST_P(SeedBudget, TextReport) {
  const Budget& b = GetParam();
  const std::string text =
      run_cli(std::string("estimate ") + b.args + " --convention textbook --units gb");
  EXPECT_EQ(round1(number_after(text, "Static state")), b.static_gb) << text;
  if (b.fits) {
    EXPECT_EQ(round1(number_after(text, "Fits: ")), b.margin_gb) << text;
  } else {
    EXPECT_EQ(round1(number_after(text, "over budget by ")), b.margin_gb) << text;
  }
}

TEST_P(SeedBudget, JsonDocument) {
  const Budget& b = GetParam();
  const auto j = nlohmann::json::parse(
      run_cli(std::string("estimate ") + b.args + " --convention textbook --json"));
  const auto& t = j.at("totals");
  const auto gb = [](std::int64_t v) { return static_cast<double>(v) / 1e9; };
  EXPECT_EQ(round1(gb(t.at("static_bytes").get<std::int64_t>())), b.static_gb);
  const auto& by = t.at("by_tenant");
  EXPECT_EQ(
      round1(gb(by.at("activations").get<std::int64_t>() + by.at("logits").get<std::int64_t>())),
      b.activations_gb);
  EXPECT_EQ(j.at("fit").at("fits").get<bool>(), b.fits);
  EXPECT_EQ(round1(std::abs(gb(j.at("fit").at("margin_bytes").get<std::int64_t>()))), b.margin_gb);
}

INSTANTIATE_TEST_SUITE_P(Seed001, SeedBudget, ::testing::ValuesIn(kBudgets),
                         [](const auto& p) { return std::string(p.param.name); });

TEST(SeedBudget, LoraAdapterLineIsSevenTenthsOfAGigabyte) {
  // Seed 001: "Adapter weights, gradients and Adam states 0.7 GB": 43,646,976 x 16 B.
  const auto j = nlohmann::json::parse(
      run_cli("estimate Qwen/Qwen3-8B --method lora --convention textbook --memory 24GB --json"));
  std::int64_t base = 0, rest = 0;
  for (const auto& i : j.at("items")) {
    const auto tenant = i.at("tenant").get<std::string>();
    const auto label = i.at("label").get<std::string>();
    if (label.find("Frozen base") != std::string::npos) {
      base += i.at("bytes").get<std::int64_t>();
    } else if (tenant != "activations" && tenant != "logits") {
      rest += i.at("bytes").get<std::int64_t>();
    }
  }
  EXPECT_EQ(base, 16'400'000'000);
  EXPECT_EQ(rest, 43'646'976LL * 16);
}

struct SeedRow {
  const char* model;
  double full, lora, qlora;
  const char* lora_tier;
  const char* qlora_tier;
};

// seed-vectors.md, seed 001 per-tier table.
const SeedRow kRows[] = {
    {"Qwen3-0.6B", 9.6, 1.36, 0.49, "8 GB", "8 GB"},
    {"Qwen3-1.7B", 27.2, 3.68, 1.21, "8 GB", "8 GB"},
    {"Qwen3-4B", 64, 8.53, 2.73, "12-16 GB", "8 GB"},
    {"Qwen3-8B", 131.2, 17.1, 5.21, "24 GB", "8 GB"},
    {"Qwen3-30B-A3B", 488, 61.52, 17.29, "96 GB", "24 GB"},
};

TEST(SeedTable, TextbookJsonReproducesEveryValue) {
  const auto j = nlohmann::json::parse(run_cli("table --convention textbook --json"));
  EXPECT_EQ(j.at("schema"), "trainmem.table/1");
  EXPECT_EQ(j.at("convention"), "textbook");
  const auto& rows = j.at("rows");
  ASSERT_EQ(rows.size(), std::size(kRows));
  const auto gb2 = [](const nlohmann::json& v) {
    return std::round(static_cast<double>(v.get<std::int64_t>()) / 1e7) / 100;
  };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const SeedRow& s = kRows[i];
    const auto& r = rows[i];
    EXPECT_EQ(r.at("model"), s.model);
    EXPECT_DOUBLE_EQ(gb2(r.at("full_bytes")), s.full) << s.model;
    EXPECT_DOUBLE_EQ(gb2(r.at("lora_bytes")), s.lora) << s.model;
    EXPECT_DOUBLE_EQ(gb2(r.at("qlora_bytes")), s.qlora) << s.model;
    EXPECT_EQ(r.at("lora_tier"), s.lora_tier) << s.model;
    EXPECT_EQ(r.at("qlora_tier"), s.qlora_tier) << s.model;
  }
}

TEST(SeedTable, TextShowsSeedFiguresWithExactBeside) {
  const std::string text = run_cli("table");
  for (const char* cell :
       {"9.6 [", "1.36 [", "0.49 [", "27.2 [", "3.68 [", "1.21 [", "64 [", "8.53 [", "2.73 [",
        "131.2 [", "17.1 [", "5.21 [", "488 [", "61.52 [", "17.29 [", "12-16 GB [", "96 GB ["}) {
    EXPECT_NE(text.find(cell), std::string::npos) << cell << "\n" << text;
  }
}

}  // namespace
}  // namespace trainmem
