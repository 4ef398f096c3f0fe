"""Wheel build hook of quiver (hatchling): lays out the package quiver/.

    quiver/__init__.py    python/quiver.py, the ctypes binding
    quiver/__init__.pyi   python/quiver.pyi, its type hints
    quiver/py.typed       PEP 561 marker
    quiver/libquiver.so   the shared library: $QUIVER_LIB, else target/release/libquiver.so
    quiver/LICENSE, quiver/NOTICE

The library is platform code, so the wheel is tagged py3-none-linux_x86_64
(it is loaded with ctypes: any CPython 3 will do, the ABI tag is none).
"""

import os
import platform
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class QuiverWheelHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version, build_data):
        if self.target_name != "wheel":
            return
        here = Path(self.root)
        repo = here.parent
        lib = Path(os.environ.get("QUIVER_LIB") or repo / "target" / "release" / "libquiver.so")
        if not lib.is_file():
            raise RuntimeError(f"quiver wheel: {lib} not found; run `cargo build --release` first (or set QUIVER_LIB)")
        if platform.system() != "Linux" or platform.machine() != "x86_64":
            raise RuntimeError("quiver wheel: only linux-x86_64 wheels are built")
        files = {
            here / "quiver.py": "quiver/__init__.py",
            here / "quiver.pyi": "quiver/__init__.pyi",
            here / "py.typed": "quiver/py.typed",
            lib.resolve(): "quiver/libquiver.so",
        }
        for name in ("LICENSE", "NOTICE"):
            if (repo / name).is_file():
                files[repo / name] = f"quiver/{name}"
        for src, dst in files.items():
            if not src.is_file():
                raise RuntimeError(f"quiver wheel: {src} is missing")
            build_data["force_include"][str(src)] = dst
        build_data["pure_python"] = False
        build_data["tag"] = "py3-none-linux_x86_64"
