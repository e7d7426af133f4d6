"""The Python package against the engine: the same numbers as the command line, typed results,
errors as exceptions."""
import json
import os
import shutil
import subprocess

import pytest

import trainmem

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.path.join(ROOT, "build", "bin", "trainmem")


def cli_json(*args):
    if not os.path.exists(CLI):
        pytest.skip("build/bin/trainmem not built")
    out = subprocess.run([CLI, *args, "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_version_matches_the_header():
    header = open(os.path.join(ROOT, "include", "trainmem", "trainmem.h")).read()
    assert f'kVersion = "{trainmem.__version__}"' in header


def test_issue_example_lora_peak_equals_the_cli():
    r = trainmem.estimate("Qwen/Qwen3-8B", method="lora")
    assert isinstance(r.peak_bytes, int) and r.peak_bytes > 16 * 2**30  # bf16 weights alone
    assert r.peak_bytes == cli_json("estimate", "Qwen/Qwen3-8B", "--method", "lora")["totals"][
        "peak_bytes"]


@pytest.mark.parametrize("kwargs,flags", [
    (dict(batch=4, seq=1024), ["--batch", "4", "--seq", "1024"]),
    (dict(method="qlora", lora_rank=64, lora_targets="q,v"),
     ["--method", "qlora", "--lora-rank", "64", "--lora-targets", "q,v"]),
    (dict(checkpointing="full", batch=8, seq=2048),
     ["--checkpointing", "full", "--batch", "8", "--seq", "2048"]),
    (dict(method="lora", batch=1, eval_strategy="steps", eval_batch=4),
     ["--method", "lora", "--batch", "1", "--eval-strategy", "steps", "--eval-batch", "4"]),
    # Framework profiles, library versions and behaviour switches travel with the plan.
    (dict(method="lora", framework="litgpt"), ["--method", "lora", "--framework", "litgpt"]),
    (dict(method="qlora", framework="hf", versions="bitsandbytes=0.42.0", padding_mask=True),
     ["--method", "qlora", "--framework", "hf", "--versions", "bitsandbytes=0.42.0",
      "--padding-mask"]),
    (dict(method="lora", framework="torchtune", compile=True),
     ["--method", "lora", "--framework", "torchtune", "--compile"]),
    (dict(method="lora", keep_outputs=True, use_cache=True, padding_mask=True),
     ["--method", "lora", "--keep-outputs", "--use-cache", "--padding-mask"]),
    (dict(method="lora", framework="hf@4.57", use_cache=False),
     ["--method", "lora", "--framework", "hf@4.57", "--no-use-cache"]),
])
def test_plans_price_like_the_cli(kwargs, flags):
    r = trainmem.estimate("qwen2.5-1.5b", **kwargs)
    doc = cli_json("estimate", "qwen2.5-1.5b", *flags)
    assert r.peak_bytes == doc["totals"]["peak_bytes"]
    assert r.by_tenant == doc["totals"]["by_tenant"]
    assert [i.bytes for i in r.items] == [i["bytes"] for i in doc["items"]]


def test_result_is_typed_and_sums():
    r = trainmem.estimate("qwen3-0.6b", batch=2, seq=512, gpu="rtx-4090")
    assert r.static_bytes == sum(r.by_tenant[t] for t in
                                 ("weights", "gradients", "optimizer_states", "master_weights"))
    assert r.by_phase[r.peak_phase] == r.peak_bytes == max(r.by_phase.values())
    assert all(isinstance(i, trainmem.Item) and i.formula for i in r.items)
    assert r.fit is not None and r.fit.device == "rtx-4090" and r.fit.fits
    assert json.loads(r.to_json())["totals"]["peak_bytes"] == r.peak_bytes
    assert r.to_dict()["plan"]["batch"] == 2
    html = r._repr_html_()
    assert "fits" in html and "weights" in html
    assert "Peak" in r.text() and "params" in r.explain()
    # explain() ends with the arithmetic of the GPU figures: the device total as a sum.
    assert "\nDevice total (nvidia-smi)\n    = reserved " in r.explain()


def test_memory_needs_a_unit_and_fit_follows_it():
    small = trainmem.estimate("qwen3-0.6b", memory="1GiB")
    assert small.fit is not None and not small.fit.fits
    assert small.fit.capacity_bytes == 2**30


def test_errors_are_exceptions_with_the_library_message():
    with pytest.raises(trainmem.TrainmemError, match="batch"):
        trainmem.estimate("qwen3-0.6b", batch=0)
    with pytest.raises(trainmem.TrainmemError, match="not a plan setting.*did you mean batch"):
        trainmem.estimate("qwen3-0.6b", bacth=2)
    with pytest.raises(trainmem.TrainmemError, match="not one of"):
        trainmem.estimate("qwen3-0.6b", method="lorra")
    with pytest.raises(trainmem.TrainmemError, match="did you mean"):
        trainmem.estimate("qwen3-0.6", batch=1)
    with pytest.raises(ValueError):  # TrainmemError is a ValueError
        trainmem.estimate("qwen3-0.6b", gpu="rtx-9999")


def test_the_ecosystems_keyword_names_price_as_the_command_lines_flags():
    # The README's SFTConfig example, in its own keywords, against the same flags.
    kwargs = dict(load_in_4bit=True, lora_r=16, target_modules="all-linear",
                  per_device_train_batch_size=2, gradient_accumulation_steps=8, max_length="4k",
                  gradient_checkpointing=True, optim="paged_adamw_8bit", bf16=True)
    r = trainmem.estimate("Qwen/Qwen3-8B", gpu="rtx-4090", **kwargs)
    doc = cli_json("estimate", "Qwen/Qwen3-8B", "--load-in-4bit", "--lora-r", "16",
                   "--target-modules", "all-linear", "--per-device-train-batch-size", "2",
                   "--gradient-accumulation-steps", "8", "--max-length", "4k",
                   "--gradient-checkpointing", "--optim", "paged_adamw_8bit", "--bf16",
                   "--gpu", "rtx-4090")
    assert r.peak_bytes == doc["totals"]["peak_bytes"]
    assert r.plan["method"] == "qlora" and r.plan["batch"] == 2 and r.plan["seq"] == 4096
    assert trainmem.plan(gradient_checkpointing=False)["checkpointing"] == "none"
    with pytest.raises(trainmem.TrainmemError, match="'maybe' is not true or false"):
        trainmem.plan(bf16="maybe")


def test_wrong_argument_types_are_trainmem_errors():
    # A number where a name or size goes is its text: gpu=4090 is the RTX 4090.
    assert trainmem.estimate("qwen3-0.6b", gpu=4090).fit.device == "rtx-4090"
    with pytest.raises(trainmem.TrainmemError, match="24GB"):
        trainmem.estimate("qwen3-0.6b", memory=24)
    with pytest.raises(trainmem.TrainmemError, match="gpu: expected text"):
        trainmem.estimate("qwen3-0.6b", gpu=["rtx-4090"])
    assert trainmem.solve("qwen3-0.6b", "max-batch", memory="24GB", step="4").answer % 4 == 0
    with pytest.raises(trainmem.TrainmemError, match="step: expected a positive whole number"):
        trainmem.solve("qwen3-0.6b", "max-batch", memory="24GB", step=0)
    with pytest.raises(trainmem.TrainmemError, match="no_such_file.yaml: cannot read the file"):
        trainmem.estimate("qwen3-0.6b", args="no_such_file.yaml")


def test_advice_and_solution_say_what_they_hold():
    adv = trainmem.advise("qwen3-8b", gpu="rtx-4090")
    assert repr(adv).startswith("<Advice: does not fit rtx-4090;")
    first = adv.options[0]
    # Each option says how many settings it changes and how it ranks on cost, as the JSON does.
    assert first.changes >= 1 and first.cost_rank >= 0 and first.flags
    sol = trainmem.solve("qwen3-0.6b", "max-batch", memory="24GB")
    assert repr(sol) == f"<Solution max-batch: {sol.answer} ({sol.peak_bytes / 2**30:.2f} GiB)>"


def test_plan_round_trips_with_defaults_filled():
    p = trainmem.plan(method="lora", lora_rank=8, lora_targets="q, v")
    assert p["lora"]["rank"] == 8 and p["lora"]["targets"] == ["q", "v"]
    assert p["batch"] == 1 and p["method"] == "lora"
    assert p["optimizer_impl"] == "fused"  # the HF Trainer's default, as on the command line
    assert trainmem.plan(plan=p) == p
    assert trainmem.plan(lora={"rank": 8, "targets": ["q", "v"]}, method="lora") == p
    assert trainmem.estimate("qwen3-0.6b", plan=p).peak_bytes == trainmem.estimate(
        "qwen3-0.6b", method="lora", lora_rank=8, lora_targets="q,v").peak_bytes


def test_solve_and_advise():
    s = trainmem.solve("qwen3-0.6b", "max-batch", gpu="rtx-4090", seq=1024)
    doc = cli_json("solve", "qwen3-0.6b", "--for", "max-batch", "--gpu", "rtx-4090")
    assert s.found and s.answer == doc["answer"] > 1
    a = trainmem.advise("Qwen/Qwen3-8B", gpu="rtx-4090")
    assert not a.fits_now and a.options and any(o.fits for o in a.options)
    assert all(o.peak_bytes > 0 for o in a.options)


def test_solve_steps_max_seq_as_the_command_line():
    # max-seq answers in multiples of 64 tokens unless a step is given, as `trainmem solve` does.
    s = trainmem.solve("qwen3-0.6b", "max-seq", gpu="rtx-4090", method="lora")
    doc = cli_json("solve", "qwen3-0.6b", "--for", "max-seq", "--gpu", "rtx-4090", "--method",
                   "lora")
    assert s.found and s.answer == doc["answer"] and s.answer % 64 == 0
    one = trainmem.solve("qwen3-0.6b", "max-seq", gpu="rtx-4090", method="lora", step=1)
    assert s.answer <= one.answer < s.answer + 64


def test_a_layout_is_priced_per_rank_as_the_command_line_prices_it():
    layout = {"engine": "deepspeed", "zero_stage": 3, "gpus_per_node": 8}
    e = trainmem.estimate("qwen3-8b", gpu="h100", layout=layout)
    doc = cli_json("estimate", "qwen3-8b", "--gpu", "h100", "--gpus", "8", "--zero", "3")
    assert isinstance(e, trainmem.DistributedEstimate)
    assert e.layout["world_size"] == 8 and e.layout["zero_stage"] == 3
    assert e.peak_bytes == doc["totals"]["peak_bytes"]
    assert e.fit.peak_bytes == doc["fit"]["peak_bytes"] and e.fit.fits == doc["fit"]["fits"]
    assert e.peak_bytes < trainmem.estimate("qwen3-8b", gpu="h100").peak_bytes
    assert "ZeRO-3" in e.text()
    assert trainmem.plan(layout=layout)["layout"]["zero_stage"] == 3
    with pytest.raises(trainmem.TrainmemError, match="solve prices one GPU"):
        trainmem.solve("qwen3-8b", "max-batch", gpu="h100", layout=layout)
    with pytest.raises(trainmem.TrainmemError, match="layout: must be a dict"):
        trainmem.estimate("qwen3-8b", layout=8)


def test_advise_adds_more_gpus_as_the_command_line_does():
    a = trainmem.advise("qwen3-8b", gpu="rtx-4090")
    doc = cli_json("advise", "qwen3-8b", "--gpu", "rtx-4090")
    assert [o.change for o in a.options] == [o["change"] for o in doc["options"]]
    assert any(o.change.startswith("more GPUs") for o in a.options)


def test_allocator_configuration_travels_with_the_plan():
    # alloc_conf is PYTORCH_CUDA_ALLOC_CONF of the run: estimate, solve and advise replay the
    # allocator with it, as the command line does with --alloc-conf.
    kw = dict(batch=4, seq=1024, gpu="h100")
    plain = trainmem.estimate("qwen3-0.6b", **kw).to_dict()["gpu"]
    grown = trainmem.estimate("qwen3-0.6b", alloc_conf="expandable_segments:True", **kw).to_dict()
    doc = cli_json("estimate", "qwen3-0.6b", "--batch", "4", "--seq", "1024", "--gpu", "h100",
                   "--alloc-conf", "expandable_segments:True")
    assert grown["gpu"]["peak_reserved_bytes"] == doc["gpu"]["peak_reserved_bytes"]
    assert grown["gpu"]["peak_reserved_bytes"] < plain["peak_reserved_bytes"]
    assert grown["plan"]["alloc_conf"] == "expandable_segments:True"
    s = trainmem.solve("qwen3-1.7b", "max-batch", gpu="rtx-4090", seq=1024, method="lora",
                       precision="bf16", alloc_conf="expandable_segments:True")
    doc = cli_json("solve", "qwen3-1.7b", "--for", "max-batch", "--gpu", "rtx-4090", "--seq",
                   "1024", "--method", "lora", "--precision", "bf16", "--alloc-conf",
                   "expandable_segments:True")
    assert s.answer == doc["answer"]
    with pytest.raises(trainmem.TrainmemError, match="alloc_conf: 'bogus': unknown key"):
        trainmem.estimate("qwen3-0.6b", gpu="h100", alloc_conf="bogus:1")


def test_the_environments_allocator_configuration_applies_as_on_the_command_line(monkeypatch):
    kw = dict(batch=4, seq=1024, gpu="h100")
    for name in ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"):
        monkeypatch.delenv(name, raising=False)
    plain = trainmem.estimate("qwen3-0.6b", **kw).to_dict()["gpu"]["peak_reserved_bytes"]
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    grown = trainmem.estimate("qwen3-0.6b", **kw).to_dict()
    assert grown["plan"]["alloc_conf"] == "expandable_segments:True"
    assert grown["gpu"]["peak_reserved_bytes"] < plain
    # A call's own alloc_conf wins over the environment.
    given = trainmem.estimate("qwen3-0.6b", alloc_conf="max_split_size_mb:128", **kw).to_dict()
    assert given["plan"]["alloc_conf"] == "max_split_size_mb:128"
    # PYTORCH_ALLOC_CONF, which PyTorch reads first since 2.9, wins over the older name.
    monkeypatch.setenv("PYTORCH_ALLOC_CONF", "max_split_size_mb:256")
    generic = trainmem.estimate("qwen3-0.6b", **kw).to_dict()
    assert generic["plan"]["alloc_conf"] == "max_split_size_mb:256"


def test_plans_the_command_line_refuses_are_refused():
    # The checks of a plan against its model (check_plan_for_model), as the command line runs them.
    with pytest.raises(trainmem.TrainmemError, match="too large to price"):
        trainmem.estimate("qwen3-8b", seq=2**24, batch=1048576)
    with pytest.raises(trainmem.TrainmemError, match="'router' matches no module"):
        trainmem.estimate("qwen3-8b", method="lora", lora_targets="router")
    with pytest.raises(trainmem.TrainmemError, match="past the last layer"):
        trainmem.estimate("qwen3-8b", method="freeze", train_layers="40-50")
    with pytest.raises(trainmem.TrainmemError, match="matches no module"):
        trainmem.solve("qwen3-8b", "max-batch", gpu="h100", method="lora", lora_targets="router")
    with pytest.raises(trainmem.TrainmemError, match="matches no module"):
        trainmem.advise("qwen3-8b", gpu="rtx-4090", method="lora", lora_targets="router")


def test_text_and_repr_give_the_verdicts_figure_and_reserve():
    r = trainmem.estimate("qwen2.5-0.5b", batch=5, seq=1024, gpu="rtx-4090")
    assert r.fit is not None and r.fit.figure == "device total"
    assert f"device total {r.fit.peak_bytes / 2**30:.2f} GiB" in repr(r)
    assert f"{r.fit.peak_bytes / 2**30:.2f} of" in r._repr_html_()
    reserved = trainmem.estimate("qwen2.5-0.5b", memory="24GB", reserve="4GB")
    doc = cli_json("estimate", "qwen2.5-0.5b", "--memory", "24GB", "--reserve", "4GB")
    assert reserved.fit.usable_bytes == doc["fit"]["usable_bytes"] == 20 * 10**9
    assert "usable 20.00 GB" in reserved.text()
    with pytest.raises(trainmem.TrainmemError, match="leaves nothing"):
        trainmem.estimate("qwen3-8b", memory="8GB", reserve="16GB")


def test_devices_and_models():
    devs = {d.id: d for d in trainmem.devices()}
    assert devs["rtx-4090"].capacity_bytes == 24564 * 2**20
    ids = {m.id: m for m in trainmem.models()}
    assert ids["qwen3-8b"].params_total == 8_190_735_360


QWEN3_CONFIG = {
    "model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"], "vocab_size": 1000,
    "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
    "max_position_embeddings": 512, "rms_norm_eps": 1e-6, "tie_word_embeddings": True,
    "torch_dtype": "bfloat16", "rope_theta": 10000.0,
}


def qwen3_tensors():
    h, i, v, kv = 64, 128, 1000, 32
    out = [("model.embed_tokens.weight", (v, h)), ("model.norm.weight", (h,))]
    for layer in range(2):
        p = f"model.layers.{layer}."
        out += [(p + "self_attn.q_proj.weight", (64, h)), (p + "self_attn.k_proj.weight", (kv, h)),
                (p + "self_attn.v_proj.weight", (kv, h)), (p + "self_attn.o_proj.weight", (h, 64)),
                (p + "self_attn.q_norm.weight", (16,)), (p + "self_attn.k_norm.weight", (16,)),
                (p + "mlp.gate_proj.weight", (i, h)), (p + "mlp.up_proj.weight", (i, h)),
                (p + "mlp.down_proj.weight", (h, i)), (p + "input_layernorm.weight", (h,)),
                (p + "post_attention_layernorm.weight", (h,))]
    return out


class FakeConfig:
    """Duck-typed transformers PretrainedConfig."""
    _name_or_path = "tiny-qwen3"

    def to_json_string(self, use_diff=True):
        return json.dumps(QWEN3_CONFIG)


class FakeParam:
    def __init__(self, shape, dtype="torch.bfloat16"):
        self.shape, self.dtype = shape, dtype


class FakeModule:
    config = FakeConfig()

    def named_parameters(self):
        return [(n, FakeParam(s)) for n, s in qwen3_tensors()]


def hand_count():
    total = 0
    for _, shape in qwen3_tensors():
        n = 1
        for d in shape:
            n *= d
        total += n
    return total


def test_from_hf_config_prices_the_architecture():
    m = trainmem.from_hf_config(FakeConfig())
    assert m.model_type == "qwen3" and m.source == "config"
    assert m.params_total == hand_count()  # tied embeddings counted once
    r = trainmem.estimate(m, batch=2, seq=64)
    assert r.model["params_total"] == hand_count()


def test_from_model_reads_the_live_inventory():
    m = trainmem.from_model(FakeModule())
    assert m.source == "module" and m.params_total == hand_count()
    # 2 B per bf16 weight, full fine-tune: the weights line is exact.
    r = trainmem.estimate(m, precision="bf16", optimizer="sgd")
    assert r.by_tenant["weights"] == 2 * hand_count()


def test_from_model_rejects_unknown_dtypes():
    class Odd(FakeModule):
        def named_parameters(self):
            return [("model.embed_tokens.weight", FakeParam((10, 4), "torch.complex64"))]

    with pytest.raises(trainmem.TrainmemError, match="complex64"):
        trainmem.from_model(Odd())


def test_from_model_with_real_transformers_on_meta():
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    config = transformers.Qwen3Config(**{k: v for k, v in QWEN3_CONFIG.items()
                                         if k not in ("model_type", "architectures")})
    with torch.device("meta"):
        module = transformers.AutoModelForCausalLM.from_config(config, torch_dtype=torch.bfloat16)
    m = trainmem.from_model(module)
    assert m.params_total == sum(p.numel() for p in module.parameters())


# The fields TRL's SFTConfig (TRL >= 0.22) and PEFT's LoraConfig hand their trainer, as
# to_dict() writes them (None and empty values are unset).
SFT_FIELDS = {"output_dir": "out", "per_device_train_batch_size": 2,
              "gradient_accumulation_steps": 8, "gradient_checkpointing": True, "bf16": True,
              "fp16": False, "optim": "adamw_torch_fused", "max_length": 2048, "packing": False,
              "learning_rate": 2e-5, "report_to": [], "deepspeed": None}
LORA_FIELDS = {"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": 16, "lora_alpha": 32,
               "lora_dropout": 0.05, "target_modules": ["q_proj", "v_proj"], "bias": "none"}


def test_config_objects_price_like_the_same_files_on_the_command_line(tmp_path):
    args, peft = tmp_path / "sft.json", tmp_path / "lora.json"
    args.write_text(json.dumps(SFT_FIELDS))
    peft.write_text(json.dumps(LORA_FIELDS))
    r = trainmem.estimate("qwen2.5-1.5b", args=SFT_FIELDS, peft_config=LORA_FIELDS)
    doc = cli_json("estimate", "qwen2.5-1.5b", "--from", str(args), "--from", str(peft))
    assert r.peak_bytes == doc["totals"]["peak_bytes"]
    assert r.plan["framework"] == "trl" and r.plan["method"] == "lora"
    assert (r.plan["batch"], r.plan["seq"], r.plan["checkpointing"]) == (2, 2048, "full")
    assert r.notes[0].startswith("args=dict read as TRL SFTConfig")
    assert any(n.startswith("peft_config=dict read as PEFT") for n in r.notes)
    # A path reads the file; a keyword overrides what the objects say.
    assert trainmem.estimate("qwen2.5-1.5b", args=str(args), peft_config=peft).peak_bytes == \
        r.peak_bytes
    assert trainmem.estimate("qwen2.5-1.5b", args=SFT_FIELDS, peft_config=LORA_FIELDS,
                             batch=1).plan["batch"] == 1
    assert trainmem.plan(args=SFT_FIELDS)["batch"] == 2


def test_modules_to_save_from_a_lora_config_and_a_keyword():
    # PEFT modules_to_save: a trained copy of lm_head (Qwen2.5-1.5B ties it: a new
    # 151,936 x 1,536 weight), read from the config object or given as the setting.
    plain = trainmem.estimate("qwen2.5-1.5b", peft_config=LORA_FIELDS)
    r = trainmem.estimate("qwen2.5-1.5b",
                          peft_config={**LORA_FIELDS, "modules_to_save": ["lm_head"]})
    assert r.plan["lora"]["modules_to_save"] == ["lm_head"]
    assert r.model["params_trainable"] - plain.model["params_trainable"] == 151_936 * 1_536
    keyword = trainmem.estimate("qwen2.5-1.5b", peft_config=LORA_FIELDS,
                                modules_to_save="lm_head")
    assert keyword.peak_bytes == r.peak_bytes > plain.peak_bytes


@pytest.mark.parametrize("kwargs,flags", [
    (dict(method="lora"), ["--method", "lora"]),
    (dict(framework="torchtune", method="lora", seq=512), ["--framework", "torchtune", "--method",
                                                           "lora", "--seq", "512"]),
    (dict(gpu="rtx-4090", batch=2), ["--gpu", "rtx-4090", "--batch", "2"]),
])
def test_notes_and_text_are_the_command_lines(kwargs, flags):
    # The plan's defaults (the LoRA recipe's bf16 base, a profile's) and what the plan means on
    # the model are said as the command line says them, in the document and in text().
    r = trainmem.estimate("qwen3-0.6b", **kwargs)
    assert r.notes == cli_json("estimate", "qwen3-0.6b", *flags)["notes"]
    text = subprocess.run([CLI, "estimate", "qwen3-0.6b", *flags], capture_output=True,
                          text=True).stdout
    assert r.text() == text


def test_config_objects_errors_name_the_argument():
    with pytest.raises(trainmem.TrainmemError, match="args=dict"):
        trainmem.estimate("qwen2.5-1.5b", args={"per_device_train_batch_size": "two",
                                                "output_dir": "out"})
    with pytest.raises(TypeError, match="to_dict"):
        trainmem.estimate("qwen2.5-1.5b", args=42)


def test_real_training_arguments_and_lora_config(tmp_path):
    transformers = pytest.importorskip("transformers")
    peft = pytest.importorskip("peft")
    args = transformers.TrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=4,
                                          gradient_checkpointing=True, bf16=False)
    lora = peft.LoraConfig(r=8, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM")
    r = trainmem.estimate("qwen2.5-1.5b", args=args, peft_config=lora)
    assert (r.plan["batch"], r.plan["checkpointing"], r.plan["method"]) == (4, "full", "lora")
    assert r.plan["lora"]["rank"] == 8
    assert r.plan["framework"] == "hf"
