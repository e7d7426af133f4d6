"""An independent live-storage tracker: a small TorchDispatchMode, used to cross-check MemTracker.

Same idea as MemTracker, written from scratch and smaller: every storage an op returns is counted
once (views share it) until a weakref on the storage fires. Categories come from what the storage
is when the peak is taken: a parameter, a parameter's .grad, an optimizer state tensor, or else an
activation (created in forward) or other (created in backward / step, or an input). It sees what
MemTracker sees and nothing more: allocations inside a kernel stay invisible to both.
"""
import weakref

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook
from torch.utils._python_dispatch import TorchDispatchMode, is_traceable_wrapper_subclass
from torch.utils._pytree import tree_leaves
from torch.utils.weak import WeakIdKeyDictionary

from .record import CATEGORIES  # not .tracker: that needs MemTracker (torch >= 2.5)


def _storages(t):
    if is_traceable_wrapper_subclass(t):
        attrs, _ = t.__tensor_flatten__()
        out = []
        for a in attrs:
            out += _storages(getattr(t, a))
        return out
    return [t.untyped_storage()]


class LiveStorageTracker(TorchDispatchMode):
    """Running total of live storage bytes with (step, phase) peaks, like PhaseMemTracker."""

    name = "dispatch"

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.optimizers = []
        self._info = WeakIdKeyDictionary()  # storage -> [nbytes, origin]
        self._refs = []
        self.current = 0
        self.step, self.phase = 0, "loaded"
        self.phase_peaks = {}
        self.peak_bytes = 0
        self.peak_at = (0, "loaded")
        self.peak_categories = dict.fromkeys(CATEGORIES, 0)
        self._hooks = []
        self._in_opt = False

    # -- bookkeeping -------------------------------------------------------------------------
    def _add(self, t, origin):
        for st in _storages(t):
            if st in self._info:
                continue
            nbytes = st.nbytes()
            self._info[st] = [nbytes, origin]
            self.current += nbytes
            self._refs.append(weakref.ref(st, self._make_release(nbytes)))

    def _make_release(self, nbytes):
        def release(_ref):
            self.current -= nbytes
        return release

    def track_external(self, *objs):
        for obj in objs:
            if isinstance(obj, torch.nn.Module):
                for t in list(obj.parameters()) + list(obj.buffers()):
                    self._add(t, "other")
            elif isinstance(obj, torch.optim.Optimizer):
                self.optimizers.append(obj)
                for state in obj.state.values():
                    for v in state.values():
                        if isinstance(v, torch.Tensor):
                            self._add(v, "other")
            elif isinstance(obj, torch.Tensor):
                self._add(obj, "other")

    def _categories_now(self):
        """Classify live storages by what they are right now (only run when the peak rises)."""
        role = {}
        for p in self.model.parameters():
            for st in _storages(p):
                role[id(st)] = "parameters"
            if p.grad is not None:
                for st in _storages(p.grad):
                    role[id(st)] = "gradients"
        for opt in self.optimizers:
            for state in opt.state.values():
                for v in state.values():
                    if isinstance(v, torch.Tensor):
                        for st in _storages(v):
                            role[id(st)] = "optimizer"
        out = dict.fromkeys(CATEGORIES, 0)
        for st, (nbytes, origin) in list(self._info.items()):
            cat = role.get(id(st))
            if cat is None:
                cat = "optimizer" if origin == "optimizer" else origin
            out[cat] += nbytes
        return out

    def _book(self):
        key = (self.step, self.phase)
        if self.current > self.phase_peaks.get(key, -1):
            self.phase_peaks[key] = self.current
        if self.current > self.peak_bytes:
            self.peak_bytes = self.current
            self.peak_at = key
            self.peak_categories = self._categories_now()

    # -- the loop's interface (same as PhaseMemTracker) ----------------------------------------
    def mark(self, step, phase):
        self.step, self.phase = step, phase
        self._book()

    def end_of_step(self):
        pass

    def __enter__(self):
        def pre(opt, args, kwargs):
            self._in_opt = True

        def post(opt, args, kwargs):
            self._in_opt = False
        self._hooks = [register_optimizer_step_pre_hook(pre), register_optimizer_step_post_hook(post)]
        return super().__enter__()

    def __exit__(self, *args):
        for h in self._hooks:
            h.remove()
        return super().__exit__(*args)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if self._in_opt:
            origin = "optimizer"
        elif self.phase == "forward":
            origin = "activations"
        else:
            origin = "other"
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor):
                self._add(t, origin)
        self._book()
        return out
