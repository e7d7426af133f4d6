"""Typed views of the library's JSON documents (docs/formats.md). Plain data; nothing computed
here but presentation."""
from __future__ import annotations

import html
import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Dict, List, Optional

from . import _native

GIB = 1 << 30


def _pick(cls, d: dict):
    names = {f.name for f in fields(cls)}
    return cls(**{k: v for k, v in d.items() if k in names})


@dataclass(frozen=True)
class Item:
    """One ledger line: bytes of one tenant, with the arithmetic and its source."""
    tenant: str
    label: str
    bytes: int
    formula: str
    source: str
    estimated: bool
    phases: List[str]


@dataclass(frozen=True)
class Fit:
    """The verdict against a device."""
    device: str
    device_name: str
    capacity_bytes: int
    reserve_bytes: int
    usable_bytes: int
    peak_bytes: int
    fits: bool
    margin_bytes: int
    tight: bool
    used_fraction: float
    native_bf16: bool
    # Which figure peak_bytes is: "device total" (nvidia-smi: the allocator's reserve and the
    # CUDA context) on a CUDA card, "peak" (live bytes) elsewhere.
    figure: str = "peak"


@dataclass(frozen=True)
class Device:
    id: str
    name: str
    kind: str
    capacity_bytes: int
    reserve_bytes: int
    usable_bytes: int
    bf16: bool
    aliases: List[str] = field(default_factory=list)

    @classmethod
    def from_dict(cls, d: dict) -> "Device":
        return _pick(cls, d)


@dataclass(frozen=True)
class ModelInfo:
    id: str
    hf_id: str
    model_type: str
    params_total: int
    params_active: int
    published: str

    @classmethod
    def from_dict(cls, d: dict) -> "ModelInfo":
        return _pick(cls, d)


class _Document:
    """A JSON document with attribute access to its top-level keys."""

    def __init__(self, doc: Dict[str, Any]):
        self._doc = doc

    def to_dict(self) -> Dict[str, Any]:
        return json.loads(json.dumps(self._doc))

    def to_json(self, indent: Optional[int] = 2) -> str:
        return json.dumps(self._doc, indent=indent)


class Estimate(_Document):
    """One priced training step (the trainmem.ledger/1 document)."""

    def __init__(self, doc: Dict[str, Any], *, _model=None, _plan_json="{}", _gpu=None,
                 _memory=None, _reserve=None, _dataset=None, _seq_given=False, _notes=()):
        super().__init__(doc)
        self._model, self._plan_json, self._gpu, self._memory = _model, _plan_json, _gpu, _memory
        self._reserve, self._dataset, self._seq_given = _reserve, _dataset, _seq_given
        self._notes = list(_notes)  # what the config objects gave and the plan's defaults
        totals = doc["totals"]
        self.model: Dict[str, Any] = doc["model"]
        self.plan: Dict[str, Any] = doc["plan"]
        self.items: List[Item] = [_pick(Item, i) for i in doc["items"]]
        self.peak_bytes: int = totals["peak_bytes"]
        self.static_bytes: int = totals["static_bytes"]
        self.activation_bytes: int = totals["activation_bytes"]
        self.peak_phase: str = totals["peak_phase"]
        self.by_tenant: Dict[str, int] = totals["by_tenant"]
        self.by_phase: Dict[str, int] = totals["by_phase"]
        self.notes: List[str] = doc["notes"]
        self.fit: Optional[Fit] = _pick(Fit, doc["fit"]) if "fit" in doc else None
        # estimate(..., dataset=PATH): the "dataset" object of docs/formats.md (tokens, priced
        # rows, advice, notes); None without a dataset.
        self.dataset: Optional[Dict[str, Any]] = doc.get("dataset")

    @property
    def peak_gib(self) -> float:
        return self.peak_bytes / GIB

    def text(self, unit: str = "gib") -> str:
        """The command line's report (with a dataset, its section, as ``--dataset`` prints it)."""
        return self._report(unit, explain=False)

    def explain(self, unit: str = "gib") -> str:
        """The arithmetic behind every line (``trainmem explain``)."""
        return self._report(unit, explain=True)

    def _report(self, unit: str, explain: bool) -> str:
        return _native.report(self._model, self._plan_json, self._gpu, self._memory,
                              self._reserve, unit, explain, self._dataset, self._seq_given,
                              self._notes)

    def _verdict_repr(self) -> str:
        # The verdict judges fit.peak_bytes (the device total on a CUDA card), not the peak.
        if self.fit is None:
            return ""
        return (f", {self.fit.figure} {self.fit.peak_bytes / GIB:.2f} GiB "
                f"{'fits' if self.fit.fits else 'does not fit'} {self.fit.device}")

    def __repr__(self) -> str:
        return (f"<Estimate {self.model['name']}: peak {self.peak_gib:.2f} GiB at "
                f"{self.peak_phase}{self._verdict_repr()}>")

    def _repr_html_(self) -> str:
        """A notebook view: the budget bar by tenant at the peak, and the verdict."""
        colours = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
                   "#b07aa1", "#9c755f"]
        scale = max(self.peak_bytes, self.fit.usable_bytes if self.fit else 0, 1)
        at_peak = self._at_peak()
        bars, rows = [], []
        for (tenant, b), colour in zip(at_peak.items(), colours):
            width = 100.0 * b / scale
            bars.append(f'<div title="{html.escape(tenant)}" style="width:{width:.2f}%;'
                        f'background:{colour}"></div>')
            rows.append(f'<tr><td><span style="color:{colour}">&#9632;</span> '
                        f'{html.escape(tenant)}</td><td style="text-align:right">'
                        f'{b / GIB:.2f} GiB</td></tr>')
        verdict = ""
        if self.fit is not None:
            word = "fits" if self.fit.fits else "does not fit"
            verdict = (f"<p><b>{word}</b> {html.escape(self.fit.device_name)}: "
                       f"{html.escape(self.fit.figure)} {self.fit.peak_bytes / GIB:.2f} of "
                       f"{self.fit.usable_bytes / GIB:.2f} GiB usable</p>")
        return (f"<div><p><b>{html.escape(self.model['name'])}</b>: peak "
                f"{self.peak_gib:.2f} GiB at {html.escape(self.peak_phase)}</p>{verdict}"
                f'<div style="display:flex;height:18px;width:100%;border:1px solid #888">'
                f'{"".join(bars)}</div><table>{"".join(rows)}</table></div>')

    def _at_peak(self) -> Dict[str, int]:
        out: Dict[str, int] = {}
        for item in self.items:
            if self.peak_phase in item.phases:
                out[item.tenant] = out.get(item.tenant, 0) + item.bytes
        return out


class DistributedEstimate(Estimate):
    """A plan spread over GPUs (the trainmem.distributed/1 document, as ``trainmem estimate
    --gpus N ... --json``): what an Estimate says, for the most-loaded rank (its lines, totals and
    the verdict judged on it), plus the layout, every class of ranks and the host memory per
    node. ``to_dict()`` is the whole document."""

    def __init__(self, doc: Dict[str, Any], **kwargs: Any):
        most = doc["ranks"][doc["most_loaded"]["index"]]["ledger"]
        super().__init__({**most, "totals": doc["totals"], "notes": doc["notes"],
                          **({"fit": doc["fit"]} if "fit" in doc else {})}, **kwargs)
        self._doc = doc
        self.layout: Dict[str, Any] = doc["layout"]
        self.most_loaded: str = doc["most_loaded"]["name"]
        # (name, how many ranks share it, peak bytes) per class of identical ranks.
        self.ranks: List[Dict[str, Any]] = [
            {"name": r["name"], "ranks": r["ranks"], "peak_bytes": r["peak_bytes"]}
            for r in doc["ranks"]]
        self.host_bytes_per_node: int = doc["host_per_node"]["peak_bytes"]

    def __repr__(self) -> str:
        return (f"<DistributedEstimate {self.model['name']} on {self.layout['describe']}: "
                f"most-loaded rank ({self.most_loaded}) peak {self.peak_gib:.2f} GiB"
                f"{self._verdict_repr()}>")


@dataclass(frozen=True)
class AdviceOption:
    change: str
    flags: str
    peak_bytes: int
    fits: bool
    margin_bytes: int
    cost: str
    cost_rank: int = 0  # what it costs in training speed or quality, lower first
    changes: int = 0  # how many settings it changes


class Advice(_Document):
    """The changes that make a plan fit, cheapest first (trainmem.advice/1)."""

    def __init__(self, doc: Dict[str, Any]):
        super().__init__(doc)
        self.fits_now: bool = doc["fits_now"]
        self.now: Fit = _pick(Fit, doc["now"])
        self.options: List[AdviceOption] = [_pick(AdviceOption, o) for o in doc["options"]]
        # advise(..., dataset=PATH): the "dataset" object of docs/formats.md; None without one.
        self.dataset: Optional[Dict[str, Any]] = doc.get("dataset")

    def __repr__(self) -> str:
        first = next((o for o in self.options if o.fits), None)
        return (f"<Advice: {'fits now' if self.fits_now else 'does not fit'} "
                f"{self.now.device}; {len(self.options)} options"
                + (f", cheapest: {first.change}>" if first else ">"))


class Solution(_Document):
    """A solver's answer (trainmem.solve/1): ``answer`` is a count or a device id."""

    def __init__(self, doc: Dict[str, Any]):
        super().__init__(doc)
        self.target: str = doc["for"]
        self.found: bool = doc["fits"]
        self.answer = doc["answer"]
        self.peak_bytes: int = doc["peak_bytes"]

    def __repr__(self) -> str:
        if not self.found:
            return f"<Solution {self.target}: nothing fits>"
        return f"<Solution {self.target}: {self.answer} ({self.peak_bytes / 2**30:.2f} GiB)>"
