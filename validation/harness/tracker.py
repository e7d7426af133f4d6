"""MemTracker with phase bookkeeping: the peak of live tensor bytes, by category and by phase.

torch's MemTracker (a private TorchDispatchMode) records every storage an op creates and frees it
through a weakref, so its running total is the live tensor bytes. It only keeps one global peak;
trainmem also needs the phase the peak falls in and a peak per phase, so this subclass hooks the
per-op peak update and books the running total under the (step, phase) the training loop set.
"""
from copy import deepcopy

from torch.distributed._tools.mem_tracker import MemTracker

PHASES = ("loaded", "forward", "end_of_forward", "backward", "end_of_backward", "optimizer_step")

# MemTracker category (a str Enum value) -> trainmem measurement category.
CATEGORY_OF = {
    "Parameter": "parameters",
    "Gradient": "gradients",
    "Optstate": "optimizer",
    "Activation": "activations",
    "Buffer": "other",
    "Temp": "other",
    "Other": "other",
}
CATEGORIES = ("parameters", "gradients", "optimizer", "activations", "other")


class _NoHandle:
    """Stands in for a grad-hook handle on a frozen parameter (nothing to remove)."""

    def remove(self):
        pass


def fold_categories(dev_snaps):
    """Sum MemTracker's per-device {category: bytes} into trainmem's five categories."""
    out = dict.fromkeys(CATEGORIES, 0)
    for snap in dev_snaps.values():
        for key, nbytes in snap.items():
            name = getattr(key, "value", key)
            if name in CATEGORY_OF:
                out[CATEGORY_OF[name]] += int(nbytes)
    return out


class PhaseMemTracker(MemTracker):
    """MemTracker that also knows the training loop's (step, phase).

    Frozen parameters are pre-seeded with no-op hook handles: MemTracker otherwise registers grad
    hooks on every parameter at the first forward, and that raises for requires_grad=False (LoRA,
    freeze). The global peak, its category split and the phase it fell in are taken from our own
    running total so they are consistent with the per-phase peaks.
    """

    name = "memtracker"

    def __init__(self, model):
        super().__init__()
        for p in model.parameters():
            if not p.requires_grad:
                self._param_to_grad_hook_handles[p] = (_NoHandle(), _NoHandle())
        self.step = 0
        self.phase = "loaded"
        self.phase_peaks = {}
        self.peak_bytes = 0
        self.peak_at = (0, "loaded")
        self.peak_categories = dict.fromkeys(CATEGORIES, 0)

    def current_bytes(self):
        return int(sum(snap.get("Total", 0) for snap in self._curr_mem_snap.values()))

    def mark(self, step, phase):
        """Enter a phase; the instant of entry is booked too (end_of_* phases are instants)."""
        self.step, self.phase = step, phase
        self._book()

    def _book(self):
        total = self.current_bytes()
        key = (self.step, self.phase)
        if total > self.phase_peaks.get(key, -1):
            self.phase_peaks[key] = total
        if total > self.peak_bytes:
            self.peak_bytes = total
            self.peak_at = key
            self.peak_categories = fold_categories(deepcopy(self._curr_mem_snap))

    def _update_peak_stats(self, peak_state):
        # Replaces MemTracker's version, which also walks every tracked module after every op to
        # keep per-module peaks (O(modules x ops): minutes for an 8B model). We only need the
        # global peak, and keep MemTracker's own per-device peak fields in step for display.
        for dev, dev_snap in self._curr_mem_snap.items():
            if self._peak_mem.get(dev, 0) < dev_snap["Total"]:
                self._peak_mem[dev] = dev_snap["Total"]
                self._peak_mem_snap[dev] = dict(dev_snap)
        self._book()

    def end_of_step(self):
        """Allow the next root forward (MemTracker refuses a second one in the same window)."""
        self.reset_mod_stats()
