"""The tensors an autograd graph saves for backward, found by walking it from its root.

Shared by the torch.compile probes (compile_loss_probe.py, compile_layer_probe.py): each node's
`_saved_*` attributes (eager ops) and `saved_tensors` (custom and compiled functions)."""

import torch


def graph_saved_tensors(grad_fn):
    """Yields (node, attribute name, tensor) for every tensor saved below `grad_fn`, each node
    once. Callers decide what counts as one tensor (a storage, or a view of one)."""
    # Python wrappers of graph nodes are made on access: hold each one visited, so that an id()
    # is not reused by a later wrapper.
    stack, visited, held = [grad_fn], set(), []
    while stack:
        node = stack.pop()
        if node is None or id(node) in visited:
            continue
        visited.add(id(node))
        held.append(node)
        for name in dir(node):
            if name.startswith("_saved_"):
                try:
                    v = getattr(node, name)
                except RuntimeError:
                    continue
                if isinstance(v, torch.Tensor):
                    yield node, name, v
        try:
            for i, v in enumerate(getattr(node, "saved_tensors", ()) or ()):
                if isinstance(v, torch.Tensor):
                    yield node, f"saved_tensors[{i}]", v
        except RuntimeError:
            pass
        stack.extend(f for f, _ in node.next_functions)
