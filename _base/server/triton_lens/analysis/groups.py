"""Grouping of recorded executions by source access: (file, line, argument name, access kind)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..model import LaunchTrace, Site

Key = tuple[str, int, str, str]  # (file, line, arg name, kind)


def arg_name(launch: LaunchTrace, site: Site) -> str:
    return launch.tensors[site.arg].name if site.arg >= 0 else "?"


def site_key(launch: LaunchTrace, site: Site) -> Key:
    return (site.file, site.line, arg_name(launch, site), site.kind)


@dataclass
class Part:
    """The executions of one key within one launch."""

    launch: LaunchTrace
    sites: list[int]
    rows: np.ndarray  # indices into the launch's execution columns


@dataclass
class Group:
    key: Key
    first: Site  # the first site seen (its column range is the diagnostic's range)
    parts: list[Part] = field(default_factory=list)


def group_executions(launches: list[LaunchTrace]) -> dict[Key, Group]:
    groups: dict[Key, Group] = {}
    for launch in launches:
        by_key: dict[Key, list[int]] = {}
        for i, site in enumerate(launch.sites):
            by_key.setdefault(site_key(launch, site), []).append(i)
        for key, sites in by_key.items():
            rows = np.flatnonzero(np.isin(launch.ex_site, sites))
            g = groups.get(key)
            if g is None:
                g = groups[key] = Group(key, launch.sites[sites[0]])
            g.parts.append(Part(launch, sites, rows))
    return groups


def program_label(launch: LaunchTrace, linear: int) -> tuple[int, ...]:
    """A program id as the user writes it: (7,) for a 1-D grid, (1, 2) for 2-D, (x, y, z) for 3-D."""
    x, y, z = (int(v) for v in launch.program_coords(int(linear)))
    gx, gy, gz = launch.grid
    if gz > 1:
        return (x, y, z)
    if gy > 1:
        return (x, y)
    return (x,)
