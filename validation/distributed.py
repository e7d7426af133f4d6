"""Measure DDP / FSDP1 / FSDP2 training steps over several CPU ranks (gloo) and write JSONL rows.

    python validation/distributed.py --matrix dist --out validation/data/distributed.jsonl

Each configuration runs `torchrun --standalone --nproc-per-node N harness/dist_worker.py`; every
rank traces its own peak of live tensor bytes with the single-device harness's tracker and step
loop, and the ranks' results are merged into one row (harness/dist_record.py: the largest rank's
peak, every rank's peak listed). One torch thread per rank (OMP_NUM_THREADS=1). A failing
configuration is reported on stderr and skipped; the exit status is 1 if any failed.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from harness import configs, dist_record, record  # noqa: E402

BASE = dict(method="full", optimizer="adamw", optimizer_impl="foreach", precision="bf16",
            checkpointing="none", attention="sdpa", batch=2, seq=128, grad_accum=1, loss="full")
LORA = dict(method="lora", lora_rank=16, lora_alpha=32, lora_dropout=0.0,
            lora_targets="q,k,v,o,gate,up,down")
ENGINES = ("ddp", "fsdp1-full", "fsdp1-grad-op", "fsdp2-full", "fsdp2-grad-op")


def _spec(model, engine, world, **kw):
    return dict(BASE, model=model, engine_tag=engine, world_size=world, **kw)


def dist_matrix():
    """Two families x five engines x 2 and 4 ranks (full AdamW), LoRA on 2 ranks per engine, and
    per engine one row at another shape with checkpointing (the peak moves into a block's
    recomputation in backward, where FSDP's gathered blocks are live)."""
    full = [_spec(m, e, w) for m in ("qwen3-tiny", "llama-tiny") for w in (2, 4) for e in ENGINES]
    # FSDP1 flattens one dtype per unit, and PEFT keeps fp32 adapters on the bf16 base: FSDP1
    # refuses to wrap that ("Must flatten tensors with uniform dtype"), so LoRA runs on the others.
    lora = [_spec("qwen3-tiny", e, 2, **LORA) for e in ENGINES if not e.startswith("fsdp1-")]
    ckpt = [_spec("qwen3-tiny", e, 4, checkpointing="full", seq=256) for e in ENGINES]
    # torchtune's custom_sharded_layers: the embedding and the output projection as FSDP2 units
    # of their own (an 8,192-token vocabulary: each is 5 decoder layers of qwen3-tiny).
    units = [_spec("qwen3-tiny", "fsdp2-full-units", w) for w in (2, 4)] + [
        _spec("qwen3-tiny", "fsdp2-full-units", 2, **LORA),
        _spec("qwen3-tiny", "fsdp2-full-units", 4, checkpointing="full", seq=256)]
    return full + lora + ckpt + units


def zero_matrix():
    """DeepSpeed ZeRO 1-3 on 2 and 4 ranks (needs deepspeed importable; DS_ACCELERATOR=cpu)."""
    return [_spec("qwen3-tiny", f"zero{z}", w, precision="bf16-fp32-master")
            for w in (2, 4) for z in (1, 2, 3)]


def dist_subset():
    return [_spec("qwen3-tiny", e, 2) for e in ("ddp", "fsdp2-full")]


MATRICES = {"dist": dist_matrix, "dist-zero": zero_matrix, "dist-subset": dist_subset}


def torchrun_argv(spec, out_dir):
    worker = os.path.join(HERE, "harness", "dist_worker.py")
    return [sys.executable, "-m", "torch.distributed.run", "--standalone",
            f"--nproc-per-node={spec['world_size']}", worker, json.dumps(spec, sort_keys=True),
            out_dir]


def measure(spec, command, timeout_s=900):
    """Run one configuration under torchrun and return its merged row."""
    with tempfile.TemporaryDirectory(prefix="trainmem-dist-") as out_dir:
        argv = torchrun_argv(spec, out_dir)
        env = dict(os.environ, OMP_NUM_THREADS="1")
        if spec["engine_tag"].startswith("zero"):
            env["DS_ACCELERATOR"] = "cpu"  # DeepSpeed's CPU accelerator (gloo)
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout_s)
        if proc.returncode != 0:
            raise RuntimeError(f"torchrun exit {proc.returncode}:\n{proc.stderr[-4000:]}")
        blocks = []
        for r in range(spec["world_size"]):
            with open(os.path.join(out_dir, f"rank{r}.json")) as f:
                blocks.append(json.load(f))
    shown = ["torchrun", "--standalone", f"--nproc-per-node={spec['world_size']}",
             "validation/harness/dist_worker.py", json.dumps(spec, sort_keys=True), "OUT_DIR"]
    env_shown = "OMP_NUM_THREADS=1 " + ("DS_ACCELERATOR=cpu " if "DS_ACCELERATOR" in env else "")
    return dist_record.merge(spec, configs.write(spec["model"]), blocks, command,
                             env_shown + shlex.join(shown))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matrix", choices=sorted(MATRICES), default="dist-subset")
    ap.add_argument("--out", required=True, help="JSONL file to (over)write")
    ap.add_argument("--only", default=None, help="keep configurations whose id contains this")
    ap.add_argument("--resume", action="store_true", help="measure only ids missing from --out")
    args = ap.parse_args(argv)
    specs = MATRICES[args.matrix]()
    if args.only:
        specs = [s for s in specs if args.only in dist_record.row_id(s)]
    if args.resume and os.path.exists(args.out):
        with open(args.out) as f:
            done = {json.loads(line)["id"] for line in f if line.strip()}
        specs = [s for s in specs if dist_record.row_id(s) not in done]
    command = record.command_line()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    failed, start = 0, time.time()
    with open(args.out, "a" if args.resume else "w") as out:
        for i, spec in enumerate(specs, 1):
            rid, t0 = dist_record.row_id(spec), time.time()
            try:
                row = measure(spec, command)
            except Exception as e:  # one broken configuration must not lose the others
                failed += 1
                print(f"[{i}/{len(specs)}] FAILED {rid}: {e}", file=sys.stderr)
                continue
            out.write(json.dumps(row) + "\n")
            out.flush()
            m = row["measured"]
            print(f"[{i}/{len(specs)}] {rid}: peak {m['peak_bytes'] / 2**20:.2f} MiB (rank "
                  f"{m['peak_rank']}, step{m['peak_step']} {m['peak_phase']}) in "
                  f"{time.time() - t0:.1f} s", file=sys.stderr, flush=True)
    print(f"{len(specs) - failed} rows written to {args.out}, {failed} failed, "
          f"{time.time() - start:.0f} s", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
