"""FuseLens module view: which nn.Module instance launched each kernel, forward and backward.

Installed by sitecustomize.py once torch is imported (docs/calling-context.md, "Modules").
Two modes (FUSELENS_TORCH_MODULES, prof-run --torch-modules):

frames (the default): the collector itself reads, at each launch, the `self` of every
torch.nn.Module._call_impl frame on the thread's Python stack and PyTorch's autograd sequence
numbers, so nothing runs per module call. This module only names the instances: a global
forward pre-hook names a root module's tree (paths as below) the first time it is called and
writes one NVTX mark per module, "fuselens:module:name:<id hex>:<class>:<path>" (id() is the
address the collector reads); once every module called has had a name for a while
(_QUIET_CALLS, or twice the modules named), the hook removes itself and module calls take
nn.Module's fast path again. Falls back to hooks where the collector cannot read frames as
memory (CPython other than 3.11 and 3.12, or FUSELENS_PYTHON_FRAMES=0).

hooks: NVTX ranges around every module call, as follows.

Forward: global module hooks (torch.nn.modules.module.register_module_forward_pre_hook and
register_module_forward_hook(always_call=True)) push "fuselens:module:fwd:<path>" on the calling
thread's NVTX stack (torch.cuda.nvtx, default domain) and pop it after the module returned.
<path> is the module instance path, model.encoder.layers.3.attn: when a root module (none of
ours open on this thread) is entered, its submodules are named from root.named_modules(), the root
by the variable that holds it in the nearest calling frames outside torch (identity match in
their locals, then globals), else by its class name.

Backward: the forward hook walks the autograd graph from the outputs' grad_fn through
next_functions, stopping at nodes created before the module was entered (autograd sequence
number at or below the high-water mark taken at the pre-hook), and claims every node no inner
module claimed (inner modules' hooks run first, so the innermost module owns each node). Each
claimed node gets a prehook that pushes "fuselens:module:bwd:<path>" and a hook that pops it:
they run on the thread that executes the node (autograd's), around the kernels it launches.

Nothing is done while torch.compile traces (torch.compiler.is_compiling()) or TorchScript
scripts; nothing at all without CUDA. Every hook is guarded: a failure logs one line
"fuselens: ..." once and turns the module view off. FUSELENS_TORCH_MODULES=0 (or off) turns
it off.
"""

import os
import sys
import threading

FWD = "fuselens:module:fwd:"
BWD = "fuselens:module:bwd:"
NAME = "fuselens:module:name:"
_QUIET_CALLS = 256  # frames mode: calls of named modules in a row before the hook is removed
_FRAME_VERSIONS = ((3, 11), (3, 12))  # CPython versions whose frames the collector reads
_CLAIM = "fuselens_module"  # key of Node.metadata marking a claimed autograd node
_FRAMES_SEARCHED = 8  # calling frames outside torch searched for the root's variable name

_state = None


def mode():
    """"off" when FUSELENS_TORCH_MODULES is 0/off/false/no, "hooks" when it is hooks or the
    collector cannot read this interpreter's frames, else "frames"."""
    value = os.environ.get("FUSELENS_TORCH_MODULES", "frames").strip().lower()
    if value in ("0", "off", "false", "no"):
        return "off"
    if value == "hooks":
        return "hooks"
    if (tuple(sys.version_info[:2]) not in _FRAME_VERSIONS
            or os.environ.get("FUSELENS_PYTHON_FRAMES", "").strip() == "0"):
        return "hooks"
    return "frames"


def enabled():
    """False when the module view is off."""
    return mode() != "off"


class _ModuleView:
    def __init__(self, torch):
        self.torch = torch
        self.local = threading.local()
        self.handles = []
        self.disabled = False
        self.cuda = None  # decided at the first module call (no CUDA work at import time)
        self.names = {}  # id(module) -> (weakref or module, path)
        self.frames = False  # frames mode: set_name also writes a name mark
        self.quiet = 0  # frames mode: calls of named modules in a row
        self.torch_dir = os.path.dirname(os.path.realpath(getattr(torch, "__file__", "") or "."))
        self.here = os.path.realpath(__file__)
        compiler = getattr(torch, "compiler", None)
        self.is_compiling = getattr(compiler, "is_compiling", None)
        if self.is_compiling is None:
            dynamo = getattr(torch, "_dynamo", None)
            self.is_compiling = getattr(dynamo, "is_compiling", None)
        if self.is_compiling is None:
            self.is_compiling = _never
        jit = getattr(torch, "jit", None)
        self.is_scripting = getattr(jit, "is_scripting", None)
        nvtx = torch.cuda.nvtx
        self.push, self.pop, self.mark = nvtx.range_push, nvtx.range_pop, nvtx.mark

    # -- guards ------------------------------------------------------------------------------
    def fail(self, error):
        """Turns the view off after the first failure, with one line on stderr."""
        if self.disabled:
            return
        self.disabled = True
        try:
            sys.stderr.write("fuselens: module view disabled: %s: %s\n"
                             % (type(error).__name__, error))
        except Exception:
            pass
        self.remove()

    def remove(self):
        for handle in self.handles:
            try:
                handle.remove()
            except Exception:
                pass
        self.handles = []

    def tracing(self):
        """True while torch.compile (dynamo) traces or TorchScript scripts: the hooks then do
        nothing, so that nothing of theirs enters a graph."""
        if self.is_compiling():
            return True
        return self.is_scripting is not None and self.is_scripting()

    def skip(self):
        """True while tracing (above), and without CUDA."""
        if self.tracing():
            return True
        if self.cuda is None:
            self.cuda = bool(self.torch.cuda.is_available())
            if not self.cuda:
                self.remove()
        return not self.cuda

    def stack(self):
        stack = getattr(self.local, "stack", None)
        if stack is None:
            stack = self.local.stack = []
            self.local.high_water = -1
        return stack

    # -- names -------------------------------------------------------------------------------
    def name_of(self, module):
        entry = self.names.get(id(module))
        if entry is not None and entry[0]() is module:
            return entry[1]
        return None

    def set_name(self, module, path):
        import weakref
        key = id(module)
        try:
            ref = weakref.ref(module, lambda _r, key=key, names=self.names: names.pop(key, None))
        except TypeError:
            ref = lambda module=module: module  # noqa: E731 (not weak-referenceable)
        self.names[key] = (ref, path)
        if self.frames:
            self.mark("%s%x:%s:%s" % (NAME, key, type(module).__name__, path))

    def outside_torch(self, frame):
        filename = frame.f_code.co_filename
        try:
            real = os.path.realpath(filename)
        except Exception:
            real = filename
        return real != self.here and not real.startswith(self.torch_dir + os.sep)

    def root_name(self, root):
        """The variable holding `root` in the nearest calling frames outside torch."""
        frame = sys._getframe(1)
        searched = 0
        while frame is not None and searched < _FRAMES_SEARCHED:
            if self.outside_torch(frame):
                searched += 1
                for scope in (frame.f_locals, frame.f_globals):
                    for key, value in scope.items():
                        if value is root and isinstance(key, str) and key.isidentifier():
                            return key
            frame = frame.f_back
        return type(root).__name__

    def name_tree(self, root):
        base = self.root_name(root)
        for relative, module in root.named_modules():
            if self.name_of(module) is None:
                self.set_name(module, base + "." + relative if relative else base)
        return self.name_of(root)

    def name_inside(self, module, parent, parent_path):
        """A module first met inside `parent` (added after the root was named)."""
        path = None
        try:
            for relative, candidate in parent.named_modules():
                if candidate is module and relative:
                    path = parent_path + "." + relative
                    break
        except Exception:
            path = None
        if path is None:
            path = parent_path + "." + type(module).__name__
        self.set_name(module, path)
        return path

    # -- frames mode -------------------------------------------------------------------------
    def name_hook(self, module, args):
        """Frames mode: names a module's tree when it is first called (the outermost unnamed
        module met is a root: outer modules' pre-hooks run first), then removes itself."""
        try:
            if self.is_compiling() or self.disabled or self.skip():  # compile check first
                return None
            if self.name_of(module) is not None:
                self.quiet += 1
                if self.quiet >= max(_QUIET_CALLS, 2 * len(self.names)):
                    self.remove()  # every module called is named: back to the fast path
                return None
            self.quiet = 0
            self.name_tree(module)
        except Exception as error:
            self.fail(error)
        return None

    # -- forward -----------------------------------------------------------------------------
    def pre_hook(self, module, args):
        try:
            # First: under torch.compile, Dynamo inlines the global hooks and folds
            # is_compiling() to True, so it traces nothing else of ours (no graph break).
            if self.is_compiling() or self.disabled or self.skip():
                return None
            stack = self.stack()
            path = self.name_of(module)
            if path is None:
                path = (self.name_inside(module, stack[-1][0], stack[-1][1]) if stack
                        else self.name_tree(module))
            mark = max(self.local.high_water, _max_sequence_nr(args))
            self.push(FWD + path)
            stack.append((module, path, mark))
        except Exception as error:
            self.fail(error)
        return None

    def forward_hook(self, module, args, output):
        try:
            if self.is_compiling() or self.disabled or self.tracing():  # first, as in pre_hook
                return None
            stack = getattr(self.local, "stack", None)
            if not stack:
                return None
            depth = len(stack) - 1
            while depth >= 0 and stack[depth][0] is not module:
                depth -= 1
            if depth < 0:  # its pre-hook skipped it (compiling) or the view started inside
                return None
            _, path, mark = stack[depth]
            try:
                seen = self.claim(output, path, mark)
                if seen > self.local.high_water:
                    self.local.high_water = seen
            finally:
                while len(stack) > depth:  # also ranges a failed inner call left open
                    stack.pop()
                    self.pop()
        except Exception as error:
            self.fail(error)
        return None

    # -- backward ----------------------------------------------------------------------------
    def claim(self, output, path, mark):
        """Claims the autograd nodes created inside this module call; returns the highest
        sequence number seen (the thread's high-water mark for later pre-hooks)."""
        highest = -1
        todo = [t.grad_fn for t in _tensors(output) if getattr(t, "grad_fn", None) is not None]
        seen, visited = set(), []  # visited keeps the wrappers alive, so no id is reused
        while todo:
            node = todo.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            visited.append(node)
            sequence = _sequence_nr(node)
            if sequence is None or sequence <= mark:
                continue  # created before the module was entered, or a leaf's AccumulateGrad
            if sequence > highest:
                highest = sequence
            metadata = node.metadata
            if _CLAIM not in metadata:
                metadata[_CLAIM] = path
                self.attach(node, path)
            for following in node.next_functions:
                todo.append(following[0])
        return highest

    def attach(self, node, path):
        label = BWD + path
        view = self

        def before(grad_outputs):
            if not view.disabled:
                try:
                    view.push(label)
                except Exception as error:
                    view.fail(error)
            return None

        def after(grad_inputs, grad_outputs):
            if not view.disabled:
                try:
                    view.pop()
                except Exception as error:
                    view.fail(error)
            return None

        node.register_prehook(before)
        node.register_hook(after)


def _never():
    return False


def _tensors(value, depth=0):
    """The tensors of a module's output: a tensor, or nested tuples, lists and dicts of them."""
    if depth > 8:
        return []
    if hasattr(value, "grad_fn"):
        return [value]
    if isinstance(value, (tuple, list)):
        out = []
        for item in value:
            out.extend(_tensors(item, depth + 1))
        return out
    if isinstance(value, dict):
        out = []
        for item in value.values():
            out.extend(_tensors(item, depth + 1))
        return out
    return []


_SEQUENCE_LEAF = 2 ** 63  # AccumulateGrad's sequence number is UINT64_MAX: never "inside"


def _sequence_nr(node):
    try:
        sequence = node._sequence_nr()
    except Exception:
        return None
    return None if sequence >= _SEQUENCE_LEAF else sequence


def _max_sequence_nr(args):
    highest = -1
    for tensor in _tensors(args):
        node = getattr(tensor, "grad_fn", None)
        if node is not None:
            sequence = _sequence_nr(node)
            if sequence is not None and sequence > highest:
                highest = sequence
    return highest


def install(torch):
    """Registers the global module hooks; returns False when turned off or unavailable."""
    global _state
    chosen = mode()
    if _state is not None or chosen == "off":
        return False
    module_mod = torch.nn.modules.module
    # torch.compile(module) warns that global module hooks exist: ours, not the user's doing, so
    # the warning is silenced for that one message (the hooks do nothing while compiling).
    import warnings
    warnings.filterwarnings(
        "ignore", message=r"Using `torch\.compile\(module\)` when there are global hooks",
        category=UserWarning)
    view = _ModuleView(torch)
    if chosen == "frames":
        view.frames = True
        view.handles.append(module_mod.register_module_forward_pre_hook(view.name_hook))
        _state = view
        return True
    view.handles.append(module_mod.register_module_forward_pre_hook(view.pre_hook))
    try:
        handle = module_mod.register_module_forward_hook(view.forward_hook, always_call=True)
    except TypeError:  # before torch 2.1: no always_call
        handle = module_mod.register_module_forward_hook(view.forward_hook)
    view.handles.append(handle)
    _state = view
    return True
