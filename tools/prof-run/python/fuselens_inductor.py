"""FuseLens: torch.compile (Inductor) kernels mapped to the source ops and user lines they fuse.

Emits, once per generated kernel and compiled graph (at load time, never per launch), an NVTX
mark in the default domain:

    fuselens:inductor:{"v":1,"graph":"0_forward","kernel":"triton_poi_fused_add_relu_0",
                       "kind":"triton","ops":["add","relu"],
                       "nodes":[{"name":"x","line":"model.py:39","module":"encoder.fc"}],
                       "site":"/tmp/torchinductor_u/ab/cab....py:123"}

* kernel: for "triton" (and "template") kernels the name the GPU sees (Triton names the compiled
  function after it); for "extern" calls (cuBLAS, cuDNN through ATen) the wrapper's call text
  ("extern_kernels.mm"): the GPU kernel's name is chosen by the library at run time, so the
  analyzer maps those through their `at::_ops::<op>` frames and the site.
* ops: Inductor's "Original ATen" list of the kernel (the ATen ops before decomposition, without
  the "aten." prefix); nodes: the Dynamo graph's "Source Nodes" with, where the FX node recorded
  it, the innermost user frame of its meta["stack_trace"] (file:line) and the module path of its
  meta["nn_module_stack"].
* site: the generated wrapper module's file and the line of the launch or call in its `call()`;
  lines: the user lines of that launch from Inductor's linemap (the stack trace of the scheduler
  node's last origin, which load_by_key_path receives with the wrapper, cache hits included).

How: the generated wrapper module is read when Inductor loads it (PyCodeCache.load_by_key_path,
which runs for fresh compilations and for cache hits alike), and parsed for the comments Inductor
writes by default above each kernel definition and call ("# Topologically Sorted Source Nodes:
[...], Original ATen: [...]", "# Source node to ATen node mapping:"). The user lines come from
the Dynamo graph handed to Inductor's compile_fx (FX node meta); a wrapper is tied to its graph by
its "# AOT ID: ['N_forward']" header (N_backward reuses N's table). Everything is guarded: a
failure here never reaches the user's program; it only loses marks. No torch import at module
level (the parser is tested without torch).
"""

import json
import re

MARK_PREFIX = "fuselens:inductor:"
_MAX_MARK = 3000  # characters; lists are cut to stay under it

_SOURCE_NODES = re.compile(
    r"#\s*(?:Topologically Sorted|Unsorted)?\s*Source Nodes:\s*\[(.*?)\],\s*Original ATen:\s*\[(.*?)\]")
_MAPPING = re.compile(r"#\s{2,}(\S+) => (.*)$")
_AOT_ID = re.compile(r"#\s*AOT ID:\s*\[?'?([^'\]]+)'?\]?")
_DEFINE = re.compile(r"^(\w+) = async_compile\.(triton|cuda|cpp|cpp_pybinding|rocm|halide)\(")
_RUN = re.compile(r"^\s*(\w+)\.run\(")
_EXTERN = re.compile(r"(?:^|[=\s(])((?:extern_kernels|torch\.ops\.\w+|aten)\.\w+(?:\.\w+)?)\(")
_FILE_LINE = re.compile(r'File "([^"]+)", line (\d+)')


def _split_list(text):
    return [t.strip() for t in text.split(",") if t.strip()]


def _op_name(aten):
    """'aten.add' -> 'add'; other namespaces keep theirs ('prims.iota')."""
    return aten[5:] if aten.startswith("aten.") else aten


def parse_wrapper(source):
    """Parses an Inductor wrapper module's source.

    Returns {"graph": AOT ID or "", "kernels": [entry]}, entry = {"kernel", "kind" ("triton",
    "template", "extern" or the async_compile backend), "ops", "source_nodes", "mapping"
    ({source node: [post-grad nodes]}), "sites": [wrapper line numbers, 1-based]}. Kernels are
    listed in definition order, extern calls in call order. Never raises on odd text: unknown
    lines are skipped.
    """
    graph = ""
    kernels = {}
    order = []
    pending = None  # the last "Source Nodes" comment: (nodes, ops, mapping)
    in_string = False
    in_mapping = False
    for number, line in enumerate(source.splitlines(), 1):
        if in_string:
            if "'''" in line or '"""' in line:
                in_string = False
            continue
        stripped = line.strip()
        if not graph:
            m = _AOT_ID.match(stripped)
            if m:
                graph = m.group(1).strip()
                continue
        m = _SOURCE_NODES.match(stripped)
        if m:
            pending = (_split_list(m.group(1)), [_op_name(o) for o in _split_list(m.group(2))], {})
            in_mapping = False
            continue
        if stripped.startswith("# Source node to ATen node mapping"):
            in_mapping = pending is not None
            continue
        if in_mapping:
            mm = _MAPPING.match(stripped) if stripped.startswith("#") else None
            if mm:
                pending[2][mm.group(1)] = _split_list(mm.group(2))
                continue
            if stripped.startswith("#"):
                if stripped.startswith("# Graph fragment") or not stripped.startswith("#  "):
                    in_mapping = False
                continue
            in_mapping = False
        if stripped.startswith("#"):
            continue
        m = _DEFINE.match(line)
        if m:
            name, backend = m.group(1), m.group(2)
            kind = "triton" if backend == "triton" else backend
            if kind == "triton" and name.startswith("triton_tem_"):
                kind = "template"
            entry = kernels.get(name)
            if entry is None:
                entry = {"kernel": name, "kind": kind, "ops": [], "source_nodes": [],
                         "mapping": {}, "sites": []}
                kernels[name] = entry
                order.append(name)
            if pending is not None:
                _merge(entry, pending)
            pending = None
            if line.count("'''") == 1 or line.count('"""') == 1:
                in_string = True
            continue
        m = _RUN.match(line)
        if m and m.group(1) in kernels:
            entry = kernels[m.group(1)]
            entry["sites"].append(number)
            if pending is not None:
                _merge(entry, pending)
                pending = None
            continue
        m = _EXTERN.search(line)
        if m and pending is not None and not stripped.startswith(("def ", "import ", "from ")):
            key = "%s@%d" % (m.group(1), number)
            entry = {"kernel": m.group(1), "kind": "extern", "ops": [], "source_nodes": [],
                     "mapping": {}, "sites": [number]}
            _merge(entry, pending)
            kernels[key] = entry
            order.append(key)
            pending = None
    return {"graph": graph, "kernels": [kernels[k] for k in order]}


def _merge(entry, pending):
    nodes, ops, mapping = pending
    for n in nodes:
        if n not in entry["source_nodes"]:
            entry["source_nodes"].append(n)
    for o in ops:
        if o not in entry["ops"]:
            entry["ops"].append(o)
    for k, v in mapping.items():
        entry["mapping"].setdefault(k, v)


def innermost_frame(stack_trace):
    """(file, line) of the last 'File "...", line N' of an FX node's meta["stack_trace"]."""
    if not stack_trace:
        return None
    found = _FILE_LINE.findall(stack_trace)
    if not found:
        return None
    path, line = found[-1]
    return path, int(line)


def module_path(nn_module_stack):
    """The innermost module's path of an FX node's meta["nn_module_stack"] ({key: (path, type)}),
    Dynamo's "L['self'].encoder.layers[3]" spelled as "encoder.layers.3"; "" for the root."""
    if not nn_module_stack:
        return ""
    try:
        last = list(nn_module_stack.values())[-1]
        path = last[0] if isinstance(last, (tuple, list)) else str(last)
    except Exception:
        return ""
    path = re.sub(r"^L\[?'?self'?\]?\.?", "", str(path))
    path = re.sub(r"\[['\"]?([^\]'\"]+)['\"]?\]", r".\1", path)
    path = re.sub(r"^L__self___?", "", path)
    return path.strip(".")


def site_lines(sites, linemap):
    """User lines ("file:line") of launch sites from Inductor's linemap, the (wrapper line,
    stack_trace) pairs PyCodeCache.load_by_key_path receives: each scheduler node's code is
    preceded by an entry carrying the stack trace of its last origin FX node, so a site takes
    the last entry at or above it."""
    entries = []
    for entry in linemap or ():
        try:
            number, trace = entry[0], entry[1]
            entries.append((int(number), trace))
        except Exception:
            continue
    entries.sort(key=lambda e: e[0])
    out = []
    for site in sites:
        trace = None
        for number, t in entries:
            if number > site:
                break
            trace = t
        frame = innermost_frame(trace) if isinstance(trace, str) else None
        if frame:
            text = "%s:%d" % frame
            if text not in out:
                out.append(text)
    return out


def marks(parsed, site_file, lines, linemap=None):
    """The mark texts of a parsed wrapper: `lines` maps a source node's name to
    {"line": "file:line", "module": path} (missing names get neither); `linemap` as
    site_lines takes it."""
    out = []
    for k in parsed["kernels"]:
        nodes = []
        for name in k["source_nodes"]:
            node = {"name": name}
            info = lines.get(name) if lines else None
            if info:
                node.update({key: value for key, value in info.items() if value})
            nodes.append(node)
        doc = {"v": 1, "graph": parsed["graph"], "kernel": k["kernel"], "kind": k["kind"],
               "ops": k["ops"], "nodes": nodes}
        if k["sites"]:
            doc["site"] = "%s:%d" % (site_file, k["sites"][0])
            found = site_lines(k["sites"], linemap)
            if found:
                doc["lines"] = found
        text = MARK_PREFIX + json.dumps(doc, separators=(",", ":"))
        while len(text) > _MAX_MARK and (doc["nodes"] or len(doc["ops"]) > 1):
            if doc["nodes"]:
                doc["nodes"] = doc["nodes"][: len(doc["nodes"]) // 2]
            else:
                doc["ops"] = doc["ops"][: len(doc["ops"]) // 2]
            doc["truncated"] = True
            text = MARK_PREFIX + json.dumps(doc, separators=(",", ":"))
        out.append(text)
    return out


# --- installation (needs torch) ---------------------------------------------------------------

_state = {"installed": False, "hooked": False, "tables": {}, "stack": [], "pending": [],
          "seen": set(), "torch": None}


def _line_table(gm):
    table = {}
    for node in getattr(getattr(gm, "graph", None), "nodes", ()):
        meta = getattr(node, "meta", None) or {}
        frame = innermost_frame(meta.get("stack_trace"))
        info = {}
        if frame:
            info["line"] = "%s:%d" % frame
        module = module_path(meta.get("nn_module_stack"))
        if module:
            info["module"] = module
        if info:
            table[node.name] = info
    return table


def _emit(texts):
    torch = _state["torch"]
    _state["pending"].extend(texts)
    try:
        if not torch.cuda.is_initialized():
            return  # the collector records from cuInit on: keep them for the next load
        pending, _state["pending"] = _state["pending"], []
        for text in pending:
            torch.cuda.nvtx.mark(text)
    except Exception:
        pass


def _on_load(path, linemap):
    if path in _state["seen"]:
        return
    _state["seen"].add(path)
    with open(path, encoding="utf-8", errors="replace") as f:
        source = f.read()
    if "def call(" not in source and "async_compile" not in source:
        return  # a kernel module, not a wrapper
    parsed = parse_wrapper(source)
    # The Dynamo graph being compiled owns this forward (or inference) graph; its backward,
    # compiled later (at the first backward()), finds it again by the AOT ID's number.
    graph_number = parsed["graph"].split("_")[0]
    lines = _state["tables"].get(graph_number)
    if lines is None and _state["stack"] and not parsed["graph"].endswith("backward"):
        lines = _state["stack"][-1]
        _state["tables"][graph_number] = lines
    if not parsed["kernels"]:
        return
    _emit(marks(parsed, path, lines or {}, linemap))


def _hook_inductor():
    if _state["hooked"]:
        return
    _state["hooked"] = True
    import torch._inductor.codecache as codecache
    import torch._inductor.compile_fx as compile_fx_module

    cache = codecache.PyCodeCache
    original_load = cache.__dict__.get("load_by_key_path")
    if original_load is not None:
        load = original_load.__func__ if isinstance(original_load, (classmethod, staticmethod)) \
            else original_load
        is_classmethod = isinstance(original_load, classmethod)

        def load_by_key_path(*args, **kwargs):
            module = load(*args, **kwargs)
            try:
                rest = list(args[1:] if is_classmethod else args)
                path = kwargs.get("path", rest[1] if len(rest) > 1 else None)
                linemap = kwargs.get("linemap", rest[2] if len(rest) > 2 else None)
                if path:
                    _on_load(str(path), linemap)
            except Exception:
                pass
            return module

        cache.load_by_key_path = classmethod(load_by_key_path) if is_classmethod \
            else staticmethod(load_by_key_path)

    original_compile_fx = compile_fx_module.compile_fx

    def compile_fx(model_, *args, **kwargs):
        try:
            table = _line_table(model_)
        except Exception:
            table = {}
        _state["stack"].append(table)
        try:
            return original_compile_fx(model_, *args, **kwargs)
        finally:
            _state["stack"].pop()

    compile_fx.__wrapped__ = original_compile_fx
    compile_fx_module.compile_fx = compile_fx


def _cuda_available():
    try:
        return bool(_state["torch"].cuda.is_available())
    except Exception:
        return False


def install(torch):
    """Installs the hooks once: wraps torch.compile, whose first call hooks Inductor (at once
    when Inductor is already imported). Nothing touches CUDA here: whether CUDA is available is
    asked at that first call, and without it nothing is hooked. Never raises."""
    try:
        if _state["installed"]:
            return
        original_compile = getattr(torch, "compile", None)
        if original_compile is None:
            return  # torch is still importing: a later install() call can succeed
        _state["torch"] = torch
        _state["installed"] = True
        import sys

        if "torch._inductor.compile_fx" in sys.modules and _cuda_available():
            _hook_inductor()

        def compile(*args, **kwargs):
            try:
                if not _state["hooked"] and _cuda_available():
                    _hook_inductor()
            except Exception:
                pass
            return original_compile(*args, **kwargs)

        compile.__wrapped__ = original_compile
        compile.__doc__ = original_compile.__doc__
        torch.compile = compile
    except Exception:
        pass
