"""The static files of the browser views: our own (in this package) and the graph library.

The graph library is vis-network, served from the ``pyvis`` wheel on PyPI, which ships vis-network's
standalone UMD build under ``pyvis/lib/vis-<version>/``. Why that wheel and not an npm install:

- ``pip install`` stays the only install step: ``make install``, the Dockerfile's
  ``pip install -r`` of the dependencies and a plain ``pip install memtrace`` all bring it, and
  the service finds it at run time through the installed distribution's file list;
- the file is the library's own release build (its licence header intact), from a registry, at a
  version pinned by the dependency, never hand-copied into this repository;
- no network at run time: users run MemTrace offline, so nothing may come from a CDN.

The alternatives checked: ``dash-cytoscape`` is only an sdist and its bundle is a React component;
``ipycytoscape`` and ``cyjupyter`` ship Jupyter-widget webpack chunks, not a standalone library.
pyvis's cost is its install-time dependencies (IPython, Jinja2, networkx, jsonpickle); we never
import it (that alone takes ~0.9 s), we only read two files from its distribution.

Every asset is read once and served with its SHA-256 as ETag. The library's URL carries its
version, so browsers may keep it for a year; our own files keep a fixed name and are revalidated.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from importlib import metadata, resources
from pathlib import Path

VIS_DISTRIBUTION = "pyvis"
_VIS_FILE = re.compile(r"^pyvis/lib/vis-(\d+(?:\.\d+)*)/vis-network\.min\.js$")

_OWN_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
}
_IMMUTABLE = "public, max-age=31536000, immutable"
_REVALIDATE = "no-cache"


class AssetMissing(RuntimeError):
    """The graph library is not installed: an install problem, not a request problem."""


@dataclass(frozen=True)
class Asset:
    """One file as served: its bytes, content type, ETag and caching policy."""

    name: str
    body: bytes
    media_type: str
    cache_control: str

    @property
    def etag(self) -> str:
        return '"' + hashlib.sha256(self.body).hexdigest()[:32] + '"'


@dataclass(frozen=True)
class VisNetwork:
    """Where the installed vis-network build is, and the names the pages link it by."""

    version: str
    js_path: Path
    css_path: Path

    @property
    def js_name(self) -> str:
        return f"vis-network-{self.version}.min.js"

    @property
    def css_name(self) -> str:
        return f"vis-network-{self.version}.css"


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


@cache
def vis_network() -> VisNetwork:
    """The newest vis-network build in the installed pyvis distribution (found without importing
    pyvis); ``AssetMissing`` says how to install it when it is not there."""
    try:
        dist = metadata.distribution(VIS_DISTRIBUTION)
    except metadata.PackageNotFoundError as e:
        raise AssetMissing(
            f"the case view needs vis-network from the {VIS_DISTRIBUTION!r} package: "
            "run `make install` (or `pip install memtrace`)"
        ) from e
    found = {
        match.group(1): str(file)
        for file in dist.files or ()
        if (match := _VIS_FILE.match(str(file).replace("\\", "/")))
    }
    if not found:
        raise AssetMissing(
            f"the installed {VIS_DISTRIBUTION} {dist.version} ships no lib/vis-*/vis-network.min.js"
        )
    version = max(found, key=_version_key)
    js_path = Path(str(dist.locate_file(found[version])))
    return VisNetwork(version, js_path, js_path.with_name("vis-network.css"))


@cache
def _catalogue() -> dict[str, Asset]:
    """Every servable file by name, read once (a few hundred kB, kept for the process)."""
    served: dict[str, Asset] = {}
    for resource in resources.files("service.ui").joinpath("static").iterdir():
        media_type = _OWN_TYPES.get(Path(resource.name).suffix)
        if media_type and resource.is_file():
            served[resource.name] = Asset(
                resource.name, resource.read_bytes(), media_type, _REVALIDATE
            )
    vis = vis_network()
    for name, path, media_type in (
        (vis.js_name, vis.js_path, _OWN_TYPES[".js"]),
        (vis.css_name, vis.css_path, _OWN_TYPES[".css"]),
    ):
        served[name] = Asset(name, path.read_bytes(), media_type, _IMMUTABLE)
    return served


def asset(name: str) -> Asset | None:
    """The asset served as ``/ui/static/<name>``, or None: only names in the catalogue exist,
    so no request can reach another file."""
    return _catalogue().get(name)
