#!/usr/bin/env python3
"""Writes data/models/*.json, the presets compiled into trainmem, from ../shared/models.json
(config fields and published counts of popular models). Run once when models.json changes:

    python3 scripts/make_presets.py ../shared/models.json data/models
"""
import json, re, sys
from pathlib import Path


def published_params(text):
    """'8.2B' -> 8200000000, '124M' -> 124000000: the first figure the model card states."""
    m = re.match(r"\s*([0-9.]+)\s*([BM])", text)
    if not m:
        raise SystemExit(f"cannot read a published count from {text!r}")
    return round(float(m.group(1)) * (1e9 if m.group(2) == "B" else 1e6))


def preset_id(hf_repo):
    """The short name: the repository's own name, lower-case ("Qwen/Qwen3-8B" -> "qwen3-8b")."""
    return hf_repo.split("/")[-1].lower()


def main(src, out_dir):
    models = json.loads(Path(src).read_text())
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, entry in models.items():
        if name.startswith("_"):
            continue
        pub = entry["published"]
        preset = {
            "id": preset_id(entry["hf_repo"]),
            "hf_id": entry["hf_repo"],
            "published": pub["total"].split(" ")[0],
            "published_params": published_params(pub["total"]),
            "published_source": pub.get("source", ""),
            "config": entry["config"],
        }
        (out / f"{preset['id']}.json").write_text(json.dumps(preset, indent=1) + "\n")
        print(preset["id"], preset["hf_id"], preset["published_params"])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
