"""Builds xladb_client, generating its gRPC stubs at build time from the project's proto/.

The stubs are never committed: build_py runs Debian's `protoc` with `grpc_python_plugin` over
xladb/v1/xladb.proto (and gRPC's own health and reflection protos) and writes the modules straight into the
build folder, as xladb_client/_proto/*_pb2.py and *_pb2_grpc.py, so an installed client always matches the
proto it was built from. The generated `*_pb2_grpc.py` modules import their `*_pb2` siblings by proto package
path (`from xladb.v1 import xladb_pb2`); that one import line is rewritten to a relative import
(`from . import xladb_pb2`), so the package needs no top-level `xladb` module and no sys.path change.

Where the inputs are (environment variables, else the defaults):
  XLADB_PROTO_DIR       the folder holding xladb/v1/xladb.proto (default: ../../proto from this file)
  XLADB_GRPC_PROTO_DIR  the folder holding grpc/health/v1/health.proto (default: /usr/share/grpc-proto,
                        Debian's grpc-proto)
  PROTOC                protoc (default: protoc on PATH; Debian's protobuf-compiler)
  GRPC_PYTHON_PLUGIN    the gRPC Python plugin (default: grpc_python_plugin on PATH; protobuf-compiler-grpc)
A missing input stops the build with a message naming it.

The build leaves nothing in the source folder: setuptools' build/ and egg-info folders go to a temporary folder
(see BUILD_BASE), so two builds of one checkout (a plain and a sanitized build folder) do not share them.
"""
import atexit
import os
import re
import shutil
import subprocess
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_DIR = os.environ.get("XLADB_PROTO_DIR") or os.path.join(HERE, "..", "..", "proto")
GRPC_PROTO_DIR = os.environ.get("XLADB_GRPC_PROTO_DIR") or "/usr/share/grpc-proto"

# (include folder, proto file relative to it): the services the client talks to.
PROTOS = [
    (PROTO_DIR, "xladb/v1/xladb.proto"),
    (GRPC_PROTO_DIR, "grpc/health/v1/health.proto"),
    (GRPC_PROTO_DIR, "grpc/reflection/v1alpha/reflection.proto"),
]

# setuptools writes build/ and <name>.egg-info/ beside setup.py unless told otherwise; pip builds a local folder
# in place, so they go to one temporary folder per build process instead (pip runs each build step in a process
# of its own and takes what that step made before it ends).
BUILD_BASE = tempfile.mkdtemp(prefix="xladb_client_build_")
atexit.register(shutil.rmtree, BUILD_BASE, ignore_errors=True)


def find_tool(env, name):
    path = os.environ.get(env) or shutil.which(name)
    if not path:
        raise SystemExit(f"xladb_client: {name} not found (set {env}, or install Debian's "
                         f"{'protobuf-compiler' if name == 'protoc' else 'protobuf-compiler-grpc'})")
    return path


def generate_stubs(out_dir):
    """protoc over PROTOS into out_dir (flat: xladb_pb2.py, health_pb2_grpc.py, …), imports made relative."""
    protoc, plugin = find_tool("PROTOC", "protoc"), find_tool("GRPC_PYTHON_PLUGIN", "grpc_python_plugin")
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="xladb_client_stubs_") as tmp:
        for include, proto in PROTOS:
            if not os.path.isfile(os.path.join(include, proto)):
                raise SystemExit(f"xladb_client: {proto} not found under {include} "
                                 "(set XLADB_PROTO_DIR or XLADB_GRPC_PROTO_DIR)")
            subprocess.run([protoc, f"-I{include}", f"--python_out={tmp}", f"--grpc_out={tmp}",
                            f"--plugin=protoc-gen-grpc={plugin}", proto], check=True)
        for _, proto in PROTOS:
            folder, stem = os.path.split(proto[:-len(".proto")])
            package = folder.replace("/", ".")
            for suffix in ("_pb2.py", "_pb2_grpc.py"):
                with open(os.path.join(tmp, folder, stem + suffix), encoding="utf-8") as f:
                    text = f.read()
                # `from xladb.v1 import xladb_pb2 as …` -> `from . import xladb_pb2 as …`; only the grpc module
                # has it, exactly once (a protoc that writes it otherwise must fail here, not at import).
                text, count = re.subn(rf"^from {re.escape(package)} import ({stem}_pb2) as ",
                                      r"from . import \1 as ", text, flags=re.MULTILINE)
                expected = 1 if suffix == "_pb2_grpc.py" else 0
                if count != expected:
                    raise SystemExit(f"xladb_client: {stem}{suffix}: {count} imports of {package}.{stem}_pb2 "
                                     f"rewritten, expected {expected}")
                with open(os.path.join(out_dir, stem + suffix), "w", encoding="utf-8") as f:
                    f.write(text)


class BuildPyWithStubs(build_py):
    """build_py, then the generated stubs into the built package's _proto folder."""

    def run(self):
        super().run()
        generate_stubs(os.path.join(self.build_lib, "xladb_client", "_proto"))


setup(
    name="xladb_client",
    version="0.1.0",
    description="Python client of xladbd, the xladb gRPC service (stubs generated from proto/ at build time)",
    packages=["xladb_client", "xladb_client._proto"],
    python_requires=">=3.9",
    # Debian's python3-grpcio and python3-protobuf (a venv made with --system-site-packages sees them); pandas
    # is optional (to_pandas).
    install_requires=["grpcio", "protobuf"],
    extras_require={"pandas": ["pandas"]},
    cmdclass={"build_py": BuildPyWithStubs},
    options={"build": {"build_base": os.path.join(BUILD_BASE, "build")},
             "egg_info": {"egg_base": BUILD_BASE}},
)
