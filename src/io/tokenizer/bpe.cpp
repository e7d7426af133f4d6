// The BPE merge loop (tokenizer/bpe.h).
#include "io/tokenizer/bpe.h"

#include <queue>
#include <vector>

#include "io/tokenizer/unicode.h"

namespace trainmem::tok {
namespace {

struct Symbol {
  std::uint32_t id = 0;
  int prev = -1;
  int next = -1;
  bool alive = true;
};

// A candidate merge of the symbol at `pos` with the next one. The queue yields the lowest rank
// first and, among equal ranks, the leftmost (the `tokenizers` library's word.rs orders its heap
// the same way).
struct Candidate {
  std::uint32_t rank = 0;
  int pos = 0;
  std::uint32_t result = 0;
  bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};

}  // namespace

std::int64_t BpeModel::count_word(std::string_view word) const {
  if (word.empty()) return 0;
  if (ignore_merges && vocab.find(word) != vocab.end()) return 1;

  // The word's symbols, as models/bpe/model.rs merge_word builds them: each character that is in
  // the vocabulary; else its bytes as <0xXX> tokens (byte fallback, when all 256 exist for its
  // bytes); else the unknown token, one per character or one per run (fuse_unk); else nothing.
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  std::int64_t pending_unk = -1;  // the unknown token waiting to be added (fuse_unk extends it)
  const auto push = [&](std::int64_t id) {
    symbols.push_back(Symbol{static_cast<std::uint32_t>(id)});
  };
  for (std::size_t i = 0; i < word.size();) {
    const std::size_t n = decode_utf8(word, i).second;
    const std::string_view ch = word.substr(i, n);
    i += n;
    if (const auto it = vocab.find(ch); it != vocab.end()) {
      if (pending_unk >= 0) push(pending_unk);
      pending_unk = -1;
      push(it->second);
      continue;
    }
    if (byte_fallback) {
      bool all = true;
      for (char b : ch) all = all && byte_ids[static_cast<unsigned char>(b)].has_value();
      if (all) {
        for (char b : ch) push(*byte_ids[static_cast<unsigned char>(b)]);
        continue;
      }
    }
    if (unk_id) {
      if (pending_unk >= 0 && !fuse_unk) push(pending_unk);
      pending_unk = *unk_id;
    }
  }
  if (pending_unk >= 0) push(pending_unk);

  const int n = static_cast<int>(symbols.size());
  for (int k = 0; k < n; ++k) {
    symbols[k].prev = k - 1;
    symbols[k].next = k + 1 < n ? k + 1 : -1;
  }
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  const auto offer = [&](int pos) {
    const int next = symbols[pos].next;
    if (next < 0) return;
    const auto m = merges.find(pair_key(symbols[pos].id, symbols[next].id));
    if (m != merges.end()) queue.push({m->second.rank, pos, m->second.result});
  };
  for (int k = 0; k + 1 < n; ++k) offer(k);

  std::int64_t count = n;
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.pos];
    if (!left.alive || left.next < 0) continue;
    const int right = left.next;
    // A stale candidate: one of the pair was merged since it was queued.
    const auto m = merges.find(pair_key(left.id, symbols[right].id));
    if (m == merges.end() || m->second.result != top.result) continue;
    left.id = top.result;
    left.next = symbols[right].next;
    if (left.next >= 0) symbols[left.next].prev = top.pos;
    symbols[right].alive = false;
    --count;
    if (left.prev >= 0) offer(left.prev);
    offer(top.pos);
  }
  return count;
}

}  // namespace trainmem::tok
