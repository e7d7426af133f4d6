"""The measured training loop: `steps` optimizer steps with the phase marks trainmem uses.

Like HF Trainer, only the loss is kept from the model output (the logits die before backward);
the loss comes from the model's own `labels=` path, so HF's fp32 upcast of the logits is traced.
Step 1 shows the lazily created optimizer state; step 2 is the steady state. Gradient
accumulation repeats forward and backward per micro-batch before the optimizer step.
"""
import contextlib

import torch


def autocast_context(precision, device="cpu"):
    if precision == "autocast-bf16":
        return torch.autocast(device_type=device, dtype=torch.bfloat16)
    return contextlib.nullcontext()


def make_batch(batch, seq, vocab, seed=0):
    """Random token ids; labels are the inputs (HF shifts them inside the loss)."""
    gen = torch.Generator().manual_seed(seed)
    input_ids = torch.randint(0, vocab, (batch, seq), generator=gen)
    return input_ids, input_ids.clone()


def train_steps(model, optimizer, tracker, input_ids, labels, precision, steps=2, device="cpu",
                grad_accum=1):
    """Run the loop under the tracker; the caller owns the tracker's result fields.

    With grad_accum > 1 each optimizer step runs that many micro-batches (the same batch again),
    each loss divided by grad_accum as HF Trainer does; the .grad tensors of micro-batch 1 stay
    live through the forward and backward of the next ones. All micro-batches of a step book
    their phases under the same (step, phase), so a phase peak is the largest micro-batch's.
    """
    with tracker:
        tracker.mark(0, "loaded")
        for step in range(1, steps + 1):
            for micro in range(grad_accum):
                tracker.mark(step, "forward")
                with autocast_context(precision, device):
                    # attention_mask=None: no padding, and no data-dependent mask checks in fake mode
                    out = model(input_ids=input_ids, labels=labels, use_cache=False)
                loss = out.loss if grad_accum == 1 else out.loss / grad_accum
                del out
                tracker.mark(step, "end_of_forward")
                tracker.mark(step, "backward")
                loss.backward()
                del loss
                tracker.mark(step, "end_of_backward")
                if micro + 1 < grad_accum:
                    tracker.end_of_step()  # a new root forward follows in the same step
            tracker.mark(step, "optimizer_step")
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            tracker.end_of_step()
    return tracker
