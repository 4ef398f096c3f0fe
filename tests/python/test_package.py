"""The Python package: the type hints (quiver.pyi) cover the binding exactly, and an
installed wheel is self-contained (its own libquiver.so, py.typed).

The stub check is generated from the two files: every public module-level name,
class, method and property of the binding's source must be in the stub with the
same parameters (names, kinds, which have defaults), and the stub must declare
nothing the binding lacks."""

import ast
import os
import subprocess

import pytest

import quiver

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INSTALLED = os.environ.get("QUIVER_TEST_INSTALLED") == "1"
SOURCE = quiver.__file__
STUB = os.path.splitext(SOURCE)[0] + ".pyi"
# dunders that are part of the API (protocols), the rest of the _names are private
PUBLIC_DUNDERS = {"__init__", "__enter__", "__exit__", "__del__", "__iter__",
                  "__arrow_c_schema__", "__arrow_c_array__", "__arrow_c_stream__"}


def public(name):
    return not name.startswith("_") or name in PUBLIC_DUNDERS


def signature(fn):
    a = fn.args
    n_pos = len(a.posonlyargs) + len(a.args)
    with_default = set(range(n_pos - len(a.defaults), n_pos))
    params = []
    for i, arg in enumerate(a.posonlyargs + a.args):
        params.append(("pos", arg.arg, i in with_default))
    if a.vararg:
        params.append(("*", a.vararg.arg, False))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        params.append(("kw", arg.arg, d is not None))
    if a.kwarg:
        params.append(("**", a.kwarg.arg, False))
    return params


def api(path):
    """{qualified name: signature or kind} of the public API defined in a file."""
    with open(path) as f:
        tree = ast.parse(f.read())
    out = {}

    def targets(node):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                yield from (e.id for e in (t.elts if isinstance(t, ast.Tuple) else [t]) if isinstance(e, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            yield node.target.id

    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and public(node.name):
            out[node.name] = signature(node)
        elif isinstance(node, ast.ClassDef) and public(node.name):
            out[node.name] = "class"
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and public(item.name):
                    props = {d.id for d in item.decorator_list if isinstance(d, ast.Name)}
                    kind = "property" if "property" in props else "classmethod" if "classmethod" in props else "method"
                    out[f"{node.name}.{item.name}"] = (kind, signature(item))
                elif isinstance(item, (ast.Assign, ast.AnnAssign)):
                    for name in targets(item):
                        if public(name) and name != "_fields_":
                            alias = getattr(item.value, "id", None)  # free = close
                            out[f"{node.name}.{name}"] = out.get(f"{node.name}.{alias}", "attribute")
        else:
            for name in targets(node):
                if public(name) and name != "__all__":
                    out[name] = "value"
    return out


def test_stub_is_next_to_the_binding():
    assert os.path.isfile(STUB), f"no type stub beside {SOURCE}"


def test_stub_declares_every_public_name_with_the_same_parameters():
    src, stub = api(SOURCE), api(STUB)
    missing = sorted(set(src) - set(stub))
    assert not missing, f"quiver.pyi lacks: {missing}"
    # values of the binding may be typed as attributes or values in the stub; callables must match
    mismatched = []
    for name, kind in src.items():
        s = stub[name]
        if isinstance(kind, (tuple, list)):
            if kind != s:
                mismatched.append(f"{name}: binding {kind}, stub {s}")
        elif kind == "class" and s != "class":
            mismatched.append(f"{name}: a class in the binding, {s} in the stub")
    assert not mismatched, "\n".join(mismatched)


def test_stub_declares_nothing_the_binding_lacks():
    src, stub = api(SOURCE), api(STUB)
    # instance attributes the binding sets in __init__ (self.x = ...) are declared in the stub
    with open(SOURCE) as f:
        tree = ast.parse(f.read())
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for node in ast.walk(cls):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" \
                    and isinstance(node.ctx, ast.Store) and public(node.attr):
                src.setdefault(f"{cls.name}.{node.attr}", "attribute")
        for field in getattr(getattr(quiver, cls.name, None), "_fields_", []):
            src.setdefault(f"{cls.name}.{field[0]}", "attribute")
    extra = sorted(n for n in set(stub) - set(src)
                   if n not in {"SchemaLike", "BufferLike", "Fill"} and not n.startswith("_"))
    assert not extra, f"quiver.pyi declares names the binding does not have: {extra}"


def test_stub_all_matches_the_binding():
    with open(STUB) as f:
        tree = ast.parse(f.read())
    stub_all = next(ast.literal_eval(n.value) for n in tree.body
                    if isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in n.targets))
    assert sorted(stub_all) == sorted(quiver.__all__)


@pytest.mark.skipif(not INSTALLED, reason="runs against the installed wheel only (tests/python/run.sh)")
def test_installed_package_is_self_contained():
    pkg = os.path.dirname(os.path.abspath(quiver.__file__))
    assert not pkg.startswith(os.path.join(ROOT, "python")), f"quiver was imported from the repository: {pkg}"
    assert os.path.basename(quiver.__file__) == "__init__.py"
    for name in ("py.typed", "__init__.pyi", "libquiver.so", "LICENSE", "NOTICE"):
        assert os.path.isfile(os.path.join(pkg, name)), f"the wheel lacks quiver/{name}"
    assert quiver.LIBRARY_PATH == os.path.join(pkg, "libquiver.so")
    # the loaded library is the packaged one, whatever QUIVER_LIB says
    maps = open("/proc/self/maps").read()
    assert os.path.realpath(quiver.LIBRARY_PATH) in maps
    # the binding inside the wheel is the repository's, byte for byte
    with open(quiver.__file__, "rb") as a, open(os.path.join(ROOT, "python", "quiver.py"), "rb") as b:
        assert a.read() == b.read(), "the installed quiver is not the repository's python/quiver.py"
    with open(os.path.join(pkg, "__init__.pyi"), "rb") as a, open(os.path.join(ROOT, "python", "quiver.pyi"), "rb") as b:
        assert a.read() == b.read()
    # every C function the binding declares is exported by the packaged library
    out = subprocess.run(["nm", "-D", "--defined-only", quiver.LIBRARY_PATH], capture_output=True, text=True)
    if out.returncode == 0:
        exported = {line.split()[-1] for line in out.stdout.splitlines()}
        with open(os.path.join(ROOT, "include", "quiver.symbols")) as f:
            listed = {line.split()[1] for line in f if line.startswith("symbol ")}
        assert listed <= exported, f"the packaged library lacks {sorted(listed - exported)}"
    with open(os.path.join(ROOT, "Cargo.toml")) as f:
        version = next(line.split('"')[1] for line in f if line.startswith("version = "))
    assert quiver.version() == version
