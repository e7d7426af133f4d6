"""trainmem measurement harness: real PyTorch training steps, traced for peak tensor memory.

The package is split one concept per module: configs (model configs as data), build (model
construction, real or fake), methods (full / LoRA / freeze), optim (optimizer factory), tracker
(MemTracker with phases), dispatch_tracker (an independent live-storage tracker), step (the training
loop with phase marks), record (the JSONL schema), cuda (the GPU-only path, not run on CPU).
"""
