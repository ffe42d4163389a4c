"""FuseLens's sitecustomize: prof-run puts this folder first on PYTHONPATH.

What it does, at interpreter start-up (docs/calling-context.md, "Modules"):
  1. chains to the next sitecustomize on sys.path (the user's or the distribution's), so that one
     still runs, as site.py would have run it;
  2. installs a post-import hook for "torch": a sys.meta_path finder that answers only for the
     name "torch" (one string compare on any other import) and wraps that module's exec_module;
  3. once torch is imported, calls install(torch) of each feature module of this folder that
     exists (fuselens_modules: the module view; fuselens_inductor: torch.compile's kernel
     origins), each at most once.

It never raises into the user's program: every hook body is guarded, and a feature that fails
logs one line "fuselens: ..." to stderr once and is disabled. Switches: FUSELENS_TORCH_MODULES=0
turns the module view off (prof-run --torch-modules off sets it).
"""

import os
import sys

_HERE = os.path.dirname(os.path.realpath(__file__))
# Feature modules of this folder, in the order they are installed; a missing one is skipped.
_FEATURES = ("fuselens_modules", "fuselens_inductor")
_logged = set()


def _log_once(what, error=None):
    """One line on stderr per `what`, never raising."""
    if what in _logged:
        return
    _logged.add(what)
    try:
        detail = "" if error is None else ": %s: %s" % (type(error).__name__, error)
        sys.stderr.write("fuselens: %s%s\n" % (what, detail))
        sys.stderr.flush()
    except Exception:  # stderr closed or replaced by something that raises
        pass


def _real(path):
    try:
        return os.path.realpath(path or os.getcwd())
    except Exception:
        return path


def _chain():
    """Runs the next sitecustomize on sys.path, skipping every FuseLens folder already visited
    (several copies of this file on the path chain through each other once)."""
    import importlib.machinery
    import importlib.util

    visited = getattr(sys, "_fuselens_site_dirs", None)
    if visited is None:
        visited = set()
        try:
            sys._fuselens_site_dirs = visited
        except Exception:
            pass
    visited.add(_HERE)
    search = [p for p in sys.path if isinstance(p, str) and _real(p) not in visited]
    ours = sys.modules.get("sitecustomize")
    try:
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", search)
        if spec is None or spec.loader is None:
            return
        module = importlib.util.module_from_spec(spec)
        sys.modules["sitecustomize"] = module  # as an import would, while it runs
        spec.loader.exec_module(module)
    except Exception as error:
        # What site.py prints for a failing sitecustomize; the program goes on, as it would have.
        if ours is not None:
            sys.modules["sitecustomize"] = ours
        try:
            sys.stderr.write(
                "Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
                "%s: %s\n" % (type(error).__name__, error))
        except Exception:
            pass


def _install_features(torch):
    """install(torch) of each feature present; a failing one is reported once and disabled."""
    import importlib.machinery
    import importlib.util

    for name in _FEATURES:
        try:
            feature = sys.modules.get(name)
            if feature is None:  # this folder's copy, whatever else sys.path holds
                spec = importlib.machinery.PathFinder.find_spec(name, [_HERE])
                if spec is None or spec.loader is None:
                    continue
                feature = importlib.util.module_from_spec(spec)
                sys.modules[name] = feature
                try:
                    spec.loader.exec_module(feature)
                except BaseException:
                    sys.modules.pop(name, None)
                    raise
            install = getattr(feature, "install", None)
            if install is not None:
                install(torch)
        except Exception as error:
            _log_once("%s disabled" % name, error)


class _TorchImportHook:
    """A meta-path finder that answers only for "torch": it asks the finders after it for the
    spec and wraps the loader's exec_module, so the features install right after torch's own
    __init__ finished. Removed from sys.meta_path once they are installed."""

    def __init__(self):
        self._busy = False
        self.done = False

    def find_spec(self, name, path=None, target=None):
        if name != "torch" or self._busy or self.done:
            return None
        self._busy = True
        try:
            spec = None
            for finder in list(sys.meta_path):
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    break
            if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
                return spec
            self._wrap(spec.loader)
            return spec
        except Exception as error:
            _log_once("torch import hook disabled", error)
            self.done = True
            return None
        finally:
            self._busy = False

    def _wrap(self, loader):
        original = loader.exec_module
        hook = self

        def exec_module(module):
            original(module)  # torch's own errors are the user's: they propagate unchanged
            try:
                loader.exec_module = original
            except Exception:
                pass
            hook.installed(module)

        loader.exec_module = exec_module

    def installed(self, torch):
        if self.done:
            return
        self.done = True
        try:
            if self in sys.meta_path:
                sys.meta_path.remove(self)
        except Exception:
            pass
        _install_features(torch)


def _start():
    try:
        _chain()
    except Exception as error:
        _log_once("sitecustomize chaining failed", error)
    try:
        hook = _TorchImportHook()
        if "torch" in sys.modules:  # imported by the chained sitecustomize already
            hook.installed(sys.modules["torch"])
        else:
            sys.meta_path.insert(0, hook)
    except Exception as error:
        _log_once("torch import hook disabled", error)


_start()
