"""What TRL's chunked_nll loss (its SFTTrainer default from TRL 1.7) allocates, measured on CPU.

TRL's SFTTrainer patches the model's lm_head (trl/trainer/sft_trainer.py _patch_chunked_ce_lm_head)
so the forward returns the loss of _chunked_cross_entropy_loss: the valid tokens are reordered
into a copy of the hidden states, and the lm_head and the cross-entropy run on chunks of 256 of
them under torch.utils.checkpoint, each chunk in fp32 (h.float() @ w.float().t(), then
log_softmax, nll_loss, argmax and the entropy -(p * log p)). This runs a tiny Llama in bf16 with
AdamW for three steps, once with the HF loss and once with TRL's patch, and records the live
tensor bytes per phase of step 3 (validation/harness/dispatch_tracker.py) and their difference,
for two hidden sizes (one equal to the chunk, one four times it) and with the lm_head trained or
frozen. trainmem does not model this loss yet (docs/frameworks.md, trl); the data is the basis for
that model.

    validation/.venv/bin/pip install -r validation/requirements-trl.txt
    validation/.venv/bin/python validation/trl_chunked_loss_probe.py \\
        --out validation/data/trl-chunked-loss-probe.json
"""
import argparse
import sys

import torch
import trl
from transformers import LlamaConfig, LlamaForCausalLM
from trl.trainer import sft_trainer

from harness.step_peaks import third_step_peaks, write_probe

LAYERS, VOCAB, BATCH, SEQ = 2, 8192, 4, 256
CHUNK = sft_trainer._CHUNKED_LM_HEAD_CHUNK_SIZE


def phase_peaks(hidden, chunked, head_trains):
    cfg = LlamaConfig(vocab_size=VOCAB, hidden_size=hidden, intermediate_size=2 * hidden,
                      num_hidden_layers=LAYERS, num_attention_heads=8, num_key_value_heads=8,
                      use_cache=False, pad_token_id=0, tie_word_embeddings=False)
    torch.manual_seed(0)
    model = LlamaForCausalLM._from_config(cfg, dtype=torch.bfloat16,
                                          attn_implementation="sdpa").train()
    model.lm_head.weight.requires_grad_(head_trains)
    if chunked:
        sft_trainer._patch_chunked_ce_lm_head(model, CHUNK)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4,
                            foreach=True)
    ids = torch.randint(3, VOCAB, (BATCH, SEQ))
    # use_cache=False as SFTTrainer.compute_loss passes it.
    return third_step_peaks(model, opt,
                            lambda: model(input_ids=ids, labels=ids, use_cache=False), (ids,))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    runs = []
    for hidden in (256, 1024):
        for head_trains in (True, False):
            full = phase_peaks(hidden, False, head_trains)
            chunked = phase_peaks(hidden, True, head_trains)
            runs.append({
                "hidden": hidden,
                "lm_head_trains": head_trains,
                "full_loss": full,
                "chunked_nll": chunked,
                "chunked_minus_full": {p: chunked[p] - full[p] for p in sorted(full)},
            })
    tokens = BATCH * (SEQ - 1)  # the shifted labels, all valid
    out = {
        "model": {"family": "llama", "layers": LAYERS, "vocab": VOCAB, "dtype": "bfloat16",
                  "attention": "sdpa", "heads": 8, "intermediate": "2 x hidden",
                  "tie_word_embeddings": False},
        "batch": BATCH, "seq": SEQ, "step": 3, "chunk": CHUNK, "valid_tokens": tokens,
        "reference_sizes": {"tokens x vocab x 4": tokens * VOCAB * 4,
                            "chunk x vocab x 4": CHUNK * VOCAB * 4,
                            "vocab x hidden x 4": {h: VOCAB * h * 4 for h in (256, 1024)},
                            "tokens x hidden x 2": {h: tokens * h * 2 for h in (256, 1024)}},
        "runs": runs,
    }
    write_probe(args.out, "trl_chunked_loss_probe.py", out, trl=trl.__version__)


if __name__ == "__main__":
    sys.exit(main())
