"""A wheelhouse of toolwire's dependencies, made from the test's own environment: each
installed distribution its requirements reach (markers evaluated here, no extras) packed
back into a wheel from the files its ``RECORD`` lists, under the tags its ``WHEEL`` file
kept. An installer pointed at it (``--no-index --find-links``) needs no network, and
installs what the suite itself runs on."""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name


def closure(root: str) -> list[metadata.Distribution]:
    """The installed distributions ``root``'s requirements reach (with the extras they
    ask for), ``root`` excluded."""
    seen: dict[str, metadata.Distribution] = {}
    todo: list[tuple[str, frozenset[str]]] = [(root, frozenset())]
    while todo:
        name, extras = todo.pop()
        for line in metadata.distribution(name).requires or ():
            requirement = Requirement(line)
            marker = requirement.marker
            if marker is not None and not any(marker.evaluate({"extra": e}) for e in {"", *extras}):
                continue
            needed = canonicalize_name(requirement.name)
            if needed not in seen or requirement.extras:
                seen[needed] = metadata.distribution(needed)
                todo.append((needed, frozenset(requirement.extras)))
    return list(seen.values())


def repack(dist: metadata.Distribution, into: Path) -> Path:
    """``dist`` as a wheel in ``into``: its files in site-packages (scripts are left out:
    the installer writes them again from ``entry_points.txt``)."""
    site = Path(str(dist.locate_file("")))
    name = canonicalize_name(dist.metadata["Name"]).replace("-", "_")
    path = into / f"{name}-{dist.version}-{_tag(dist)}.whl"
    records: list[str] = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as wheel:
        record_name = ""
        for relative in _files(dist):
            if relative.endswith("dist-info/RECORD"):
                record_name = relative
                continue
            wheel.write(site / relative, relative)
            records.append(f"{relative},,")
        wheel.writestr(record_name, "\n".join([*records, f"{record_name},,", ""]))
    return path


def _tag(dist: metadata.Distribution) -> str:
    """The compressed tag set of the ``Tag:`` lines (``py2.py3-none-any``)."""
    lines = (dist.read_text("WHEEL") or "").splitlines()
    tags = [line.split(":", 1)[1].strip().split("-") for line in lines if line.startswith("Tag:")]
    return "-".join(".".join(sorted({t[i] for t in tags})) for i in range(3))


def _files(dist: metadata.Distribution) -> Iterator[str]:
    for file in dist.files or ():
        relative = file.as_posix()
        if relative.startswith("..") or "__pycache__" in relative:
            continue
        yield relative


def wheelhouse(root: str, into: Path) -> Path:
    """``into``, holding a wheel of every distribution ``root`` needs."""
    into.mkdir(parents=True, exist_ok=True)
    for dist in closure(root):
        repack(dist, into)
    return into
