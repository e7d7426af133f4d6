"""How fast `trainmem estimate --dataset` counts tokens with a tokenizer.json, and whether its
total equals the Hugging Face `tokenizers` library's on the same file (docs/dataset.md quotes the
figures). Writes, under OUT_DIR: a synthetic multilingual JSON-lines dataset of about MB
megabytes (Zipf-distributed pseudo-words in Latin, Cyrillic, CJK and Devanagari, digits and
punctuation), a byte-level BPE tokenizer with Llama 3's regex trained on a sample of it (vocab
VOCAB), and tiny_llama's config.json beside it; then times the command line and compares totals.
    /work/venvs/measure/bin/python bench/tokenizer_speed.py build/bin/trainmem /tmp/tokbench 100
"""
import json
import os
import random
import shutil
import subprocess
import sys
import time

import tokenizers
from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
SYLLABLES = {
    "latin": ["ka", "to", "ri", "mel", "an", "st", "or", "ei", "qu", "é", "ü", "th", "ing", "er"],
    "cyrillic": ["ка", "то", "ри", "мел", "ан", "ст", "ор", "ый"],
    "cjk": ["模", "型", "训", "练", "内", "存", "数", "据", "学", "習"],
    "deva": ["म", "ॉ", "ड", "ल", "प्र", "शि", "क्ष", "ण"],
}


def words(rng, n):
    out = []
    for _ in range(n):
        script = rng.choices(list(SYLLABLES), weights=[70, 10, 12, 8])[0]
        out.append("".join(rng.choice(SYLLABLES[script]) for _ in range(rng.randint(1, 4))))
    return out


def main(cli, out_dir, megabytes, vocab=32000):
    os.makedirs(out_dir, exist_ok=True)
    rng = random.Random(1)
    lexicon = words(rng, 200_000)
    weights = [1.0 / (i + 1) for i in range(len(lexicon))]  # Zipf
    data = os.path.join(out_dir, "data.jsonl")
    target = megabytes * 1_000_000
    texts = []
    with open(data, "w", encoding="utf-8") as f:
        size = 0
        while size < target:
            n = int(rng.lognormvariate(5.0, 1.0)) + 1
            ws = rng.choices(lexicon, weights=weights, k=n)
            text = " ".join(w if rng.random() > 0.05 else str(rng.randint(0, 99999)) for w in ws)
            text = text.replace(" ", ". ", n // 15).replace(" ", "\n\n", n // 40)
            line = json.dumps({"text": text}, ensure_ascii=False) + "\n"
            f.write(line)
            texts.append(text)
            size += len(line.encode())
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_REGEX), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    trainer = trainers.BpeTrainer(vocab_size=vocab, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts[: len(texts) // 10], trainer)
    tok.save(os.path.join(out_dir, "tokenizer.json"))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    shutil.copy(os.path.join(root, "tests", "bad_input", "files", "tiny_llama.json"),
                os.path.join(out_dir, "config.json"))

    start = time.perf_counter()
    out = subprocess.run([cli, "estimate", os.path.join(out_dir, "config.json"), "--dataset", data,
                          "--json"], capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - start
    d = json.loads(out.stdout)["dataset"]
    start = time.perf_counter()
    lib_total = sum(len(e.ids) for e in tok.encode_batch(texts, add_special_tokens=False))
    lib_seconds = time.perf_counter() - start
    mb = os.path.getsize(data) / 1e6
    print(json.dumps({
        "tokenizers_version": tokenizers.__version__, "dataset_mb": round(mb, 1),
        "records": d["records"], "vocab": tok.get_vocab_size(),
        "trainmem_counted_by": d["tokens_counted_by"], "trainmem_total": d["tokens"]["total"],
        "tokenizers_total": lib_total, "equal": d["tokens"]["total"] == lib_total,
        "trainmem_seconds": round(seconds, 2), "trainmem_mb_per_s": round(mb / seconds, 1),
        "tokenizers_encode_batch_seconds": round(lib_seconds, 2),
        "cpus": os.cpu_count()}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 100)
