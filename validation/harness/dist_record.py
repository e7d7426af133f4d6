"""Multi-rank rows: the ranks' measured blocks merged into one trainmem.measurement/1 row.

Choice: one row per configuration, holding the **largest per-rank peak** (what trainmem prices:
the most-loaded rank) with that rank's phase, category split and phase peaks; every rank's peak
is kept in `measured.per_rank_peak_bytes` and the rank that peaked in `measured.peak_rank`. The
row's `config.layout` is the layout in trainmem's flag vocabulary (gpus, engine, fsdp,
fsdp_version), so `trainmem validate` prices the same layout.
"""
from . import dist_wrap, record


def row_id(spec):
    return f"{record.row_id(spec)}_{spec['engine_tag']}_w{spec['world_size']}"


def layout_block(spec):
    return dict(dist_wrap.LAYOUTS[spec["engine_tag"]], gpus=spec["world_size"], nodes=1)


def merge(spec, model_path, rank_blocks, command, torchrun_command):
    """One row from every rank's measured block (a list ordered by rank)."""
    assert [b["rank"] for b in rank_blocks] == list(range(spec["world_size"])), "missing ranks"
    top = max(rank_blocks, key=lambda b: (b["peak_bytes"], -b["rank"]))
    measured = {k: v for k, v in top.items() if k != "rank"}
    measured["peak_rank"] = top["rank"]
    measured["per_rank_peak_bytes"] = [b["peak_bytes"] for b in rank_blocks]
    cfg = record.config_block(spec, model_path)
    cfg["layout"] = layout_block(spec)
    prov = record.provenance(command)
    prov["launcher"] = torchrun_command
    prov["backend"] = "gloo"
    if spec["engine_tag"].startswith("zero"):
        import deepspeed
        prov["deepspeed"] = deepspeed.__version__
    row = {"schema": record.SCHEMA, "id": row_id(spec), "config": cfg, "measured": measured,
           "provenance": prov}
    return record.check_row(row)
