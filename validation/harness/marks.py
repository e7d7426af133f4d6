"""The tracker interface step.train_steps drives, for loops that only need its phase marks
(alloc_stream.py's tracer, segment_probe.py's clock): subclasses override mark(step, phase).
No torch import, so a CUDA probe can set PYTORCH_CUDA_ALLOC_CONF before torch starts."""


class PhaseMarker:
    def track_external(self, *objs):
        pass

    def mark(self, step, phase):
        raise NotImplementedError

    def end_of_step(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *args):
        return False
