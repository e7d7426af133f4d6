"""Trains small tokenizers with the Hugging Face `tokenizers` library, one per configuration that
trainmem's tokenizer.json reader runs (src/io/tokenizer/), and writes:
  <name>.json           the tokenizer.json the library saves
  expected_counts.json  token counts the library gives for test strings (add_special_tokens=False)
  dataset.jsonl         a small dataset, and dataset_expected.json its per-record counts under
                        llama3_split.json (the dataset report's exact p50/p95/max/total)
Deterministic: a seeded synthetic multilingual corpus. Regenerate (tests/data/tokenizers/README.md):
  /work/venvs/measure/bin/python tests/data/tokenizers/make_tokenizers.py tests/data/tokenizers
"""
import json
import random
import sys
from pathlib import Path

import tokenizers
from tokenizers import (AddedToken, Regex, Tokenizer, decoders, models, normalizers,
                        pre_tokenizers, trainers)

GPT2_REGEX = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
# Llama 3's tokenizer.json pre_tokenizer Split pattern (meta-llama/Meta-Llama-3-8B).
LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
# Qwen2's (Qwen/Qwen2.5-0.5B tokenizer.json): single digits.
QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
               r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

WORDS = {
    "en": "the model trains on long records with memory and tokens it's they'll we've I'm don't "
          "GPU batch sequence attention gradient optimizer weights Hello World".split(),
    "fr": "le modèle apprend à partir des données très longues où été mémoire".split(),
    "de": "Größe Speicher über schön Straße Übung Bäume".split(),
    "zh": "模型 训练 内存 数据 长度 序列 我们 使用".split(),
    "ja": "モデル 学習 メモリ データ です ます こんにちは".split(),
    "ko": "모델 학습 메모리 데이터 안녕하세요".split(),
    "ru": "модель обучение память данные длина".split(),
    "ar": "النموذج التدريب الذاكرة البيانات".split(),
    "hi": "मॉडल प्रशिक्षण स्मृति डेटा".split(),
    "code": ["def", "f(x):", "return", "x+1", "{", "}", "==", "!=", "//", "->", "[0]", "\t",
             "    ", "\n"],
    "num": ["1", "12", "123", "2024", "3.14", "1,000", "42", "007"],
}


def corpus(seed: int, lines: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    keys = sorted(WORDS)
    for _ in range(lines):
        lang = rng.choice(keys)
        n = rng.randint(3, 14)
        words = [rng.choice(WORDS[lang] if rng.random() < 0.85 else WORDS[rng.choice(keys)])
                 for _ in range(n)]
        sep = rng.choice([" ", " ", " ", "  ", "\n", " \n", "\t"])
        out.append(sep.join(words) + rng.choice(["", ".", "!", "?", " 😀", "\n\n"]))
    return out


TEST_STRINGS = [
    "",
    "Hello World",
    " Hello  World ",
    "I'm sure they'LL come, it's DON'T",
    "1234567890 and 3.14159 and 1,000,000",
    "a   b\n\n  c\t\td\r\n e   \n",
    "     ",
    "\n",
    "café naïve résumé",
    "cafe\u0301 (decomposed)",
    "ﬁ ligature and ① ²",
    "１２３ fullwidth",
    "模型训练需要大量内存。我们使用GPU。",
    "モデルの学習、メモリ😀🎉👍🏽",
    "👨‍👩‍👧‍👦 family emoji",
    "안녕하세요 모델",
    "Привет, модель!",
    "النموذج التدريب",
    "मॉडल प्रशिक्षण",
    "def f(x):\n    return x+1  # comment\n",
    "tabs\tand\vvertical\x0cfeed",
    "nbsp\u00a0here\u3000ideographic\u2003em",
    "next\x85line",
    "<|im_start|>user\nHi there<|im_end|>",
    "<s>[INST] hi [/INST]</s>",
    "<|begin_of_text|>Hello<|eot_id|>",
    "ZZZ unseen ŵŷ ǅ ꙮ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    "▁already▁has▁markers",
    "ΣΊΣΥΦΟΣ İstanbul ǅ ẞ",
    "fill <mask>  here and x<mask>y",
    "a [SEP]   b[SEP]",
    "Hi, there! One. Two?  3 45 678",
    "x" * 300,
    "ab" * 150 + " " + "12" * 40,
]


def byte_tokens_into_vocab(tok_json: dict) -> dict:
    """Llama 2's vocabulary holds <0x00>..<0xFF> as ordinary tokens (its byte fallback): the BPE
    trainer has no option for them, so they are added to model.vocab after the ids in use."""
    vocab = tok_json["model"]["vocab"]
    next_id = max(list(vocab.values()) + [t["id"] for t in tok_json["added_tokens"]]) + 1
    for b in range(256):
        name = f"<0x{b:02X}>"
        if name not in vocab:
            vocab[name] = next_id
            next_id += 1
    return tok_json


def train(name, model, trainer, normalizer=None, pre_tokenizer=None, decoder=None, post=None,
          added=()):
    tok = Tokenizer(model)
    if normalizer is not None:
        tok.normalizer = normalizer
    if pre_tokenizer is not None:
        tok.pre_tokenizer = pre_tokenizer
    if decoder is not None:
        tok.decoder = decoder
    tok.train_from_iterator(corpus(len(name), 3000), trainer)  # seeded per configuration
    for token in added:
        (tok.add_special_tokens if token.special else tok.add_tokens)([token])
    data = json.loads(tok.to_str())
    if post is not None:
        data = post(data)
    return Tokenizer.from_str(json.dumps(data)), data


def bpe_trainer(vocab_size, specials, byte_level, limit_alphabet=None):
    kw = dict(vocab_size=vocab_size, special_tokens=specials, show_progress=False)
    if byte_level:
        kw["initial_alphabet"] = pre_tokenizers.ByteLevel.alphabet()
    if limit_alphabet is not None:
        kw["limit_alphabet"] = limit_alphabet
    return trainers.BpeTrainer(**kw)


def configs():
    yield "gpt2_bytelevel", dict(
        model=models.BPE(),
        trainer=bpe_trainer(700, ["<|endoftext|>"], True),
        pre_tokenizer=pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        decoder=decoders.ByteLevel())
    yield "gpt2_prefix_space", dict(
        model=models.BPE(),
        trainer=bpe_trainer(600, [], True),
        pre_tokenizer=pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=True))
    yield "llama3_split", dict(
        model=models.BPE(ignore_merges=True),
        trainer=bpe_trainer(800, ["<|begin_of_text|>", "<|eot_id|>"], True),
        pre_tokenizer=pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(LLAMA3_REGEX), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]))
    yield "qwen2_nfc", dict(
        model=models.BPE(),
        trainer=bpe_trainer(700, ["<|endoftext|>", "<|im_start|>", "<|im_end|>"], True),
        normalizer=normalizers.NFC(),
        pre_tokenizer=pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(QWEN2_REGEX), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]))
    # Llama 2 / Mistral 7B as converted by transformers (legacy): Prepend + Replace normalizers,
    # no pre-tokenizer, byte fallback.
    yield "llama2_prepend", dict(
        model=models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True),
        trainer=bpe_trainer(500, ["<unk>", "<s>", "</s>"], False, limit_alphabet=120),
        normalizer=normalizers.Sequence([normalizers.Prepend("▁"),
                                         normalizers.Replace(" ", "▁")]),
        post=byte_tokens_into_vocab)
    # The newer (legacy=False) conversion: Metaspace pre-tokenizer, prepend_scheme "first".
    yield "mistral_metaspace", dict(
        model=models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True),
        trainer=bpe_trainer(500, ["<unk>", "<s>", "</s>", "[INST]", "[/INST]"], False,
                            limit_alphabet=120),
        pre_tokenizer=pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first",
                                               split=False),
        post=byte_tokens_into_vocab)
    # Metaspace splitting at every space, digits one by one, NFKC, lowercase, no byte fallback.
    yield "metaspace_digits_nfkc", dict(
        model=models.BPE(unk_token="<unk>", fuse_unk=False),
        trainer=bpe_trainer(500, ["<unk>"], False, limit_alphabet=150),
        normalizer=normalizers.Sequence([normalizers.NFKC(),
                                         normalizers.Replace(Regex(r"\s+"), " "),
                                         normalizers.Lowercase()]),
        pre_tokenizer=pre_tokenizers.Sequence([
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)]))


    # Every Split behaviour, string and regex patterns, and added tokens that strip white space:
    # one normalized (matched after NFD), one special (matched on the raw text).
    yield "split_behaviours", dict(
        model=models.BPE(),
        trainer=bpe_trainer(600, [], True),
        normalizer=normalizers.NFD(),
        pre_tokenizer=pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(r"[,.!?]"), behavior="merged_with_previous"),
            pre_tokenizers.Split(" ", behavior="removed"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]),
        added=[AddedToken("<mask>", lstrip=True, rstrip=True, normalized=True, special=False),
               AddedToken("[SEP]", lstrip=False, rstrip=True, normalized=False, special=True)])
    yield "split_next_contiguous", dict(
        model=models.BPE(),
        trainer=bpe_trainer(600, [], True),
        normalizer=normalizers.NFKD(),
        pre_tokenizer=pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(r"\s"), behavior="merged_with_next"),
            pre_tokenizers.Split(Regex(r"\p{P}"), behavior="contiguous"),
            pre_tokenizers.Digits(individual_digits=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]),
        added=[AddedToken("<mask>", lstrip=True, rstrip=False, normalized=False, special=True)])


def merges_as_strings(data: dict) -> dict:
    data["model"]["merges"] = [" ".join(m) if isinstance(m, list) else m
                               for m in data["model"]["merges"]]
    return data


def main(out_dir: str) -> None:
    out = Path(out_dir)
    expected = {"tokenizers_version": tokenizers.__version__, "strings": TEST_STRINGS,
                "counts": {}}
    for name, cfg in configs():
        cfg = dict(cfg)
        tok, data = train(name, cfg.pop("model"), cfg.pop("trainer"), **cfg)
        if name == "gpt2_bytelevel":  # merges in the older "a b" string form
            data = merges_as_strings(data)
            tok = Tokenizer.from_str(json.dumps(data))
        (out / f"{name}.json").write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n")
        expected["counts"][name] = [len(tok.encode(s, add_special_tokens=False).ids)
                                    for s in TEST_STRINGS]
    (out / "expected_counts.json").write_text(
        json.dumps(expected, ensure_ascii=False, indent=1) + "\n")

    # The dataset report: records of several schemas, counted under llama3_split.json. A record's
    # count is the sum of its text pieces' counts (each message content encoded on its own).
    tok = Tokenizer.from_file(str(out / "llama3_split.json"))
    rng = random.Random(7)
    text = corpus(11, 40)
    records, counts = [], []
    for i in range(40):
        pieces = [text[i] * rng.randint(1, 6)]
        if i % 3 == 1:
            pieces.append(text[(i + 1) % 40])
            records.append({"messages": [{"role": "user", "content": pieces[0]},
                                         {"role": "assistant", "content": pieces[1]}]})
        else:
            records.append({"text": pieces[0]})
        counts.append(sum(len(tok.encode(p, add_special_tokens=False).ids) for p in pieces))
    with open(out / "dataset.jsonl", "w") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    (out / "dataset_expected.json").write_text(json.dumps(
        {"tokenizer": "llama3_split.json", "tokenizers_version": tokenizers.__version__,
         "tokens_per_record": counts}, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
