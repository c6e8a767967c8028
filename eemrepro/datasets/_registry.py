"""The data set registry: ``registry.yaml`` read into typed, validated entries."""

import difflib
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

import yaml

from .._yaml import SAFE_LOADER
from ._errors import RegistryError, UnknownDatasetError

FORMATS = ("libsvm", "csv", "keel", "npz", "kdd-bio", "ctg-xls", "covtype", "sklearn-wine", "local")


@dataclass(frozen=True)
class FileSpec:
    """One file of a data set and every place it can come from."""

    name: str
    sha256: str | None
    urls: tuple = ()
    archive: dict | None = None  # {"url", "member"}: a tar archive holding the file
    zip_member: str | None = None  # each URL is a zip holding this member
    mirror: dict = field(default_factory=dict)  # {"path"} or {"name", "sha256", "compression"}
    local: str | None = None  # a user's own file (``_local``): read where it is, checksummed, never fetched

    def mirror_path(self, dataset_id):
        """Path of the mirror's copy relative to the mirror root."""
        if "path" in self.mirror:
            return self.mirror["path"]
        return f"{dataset_id}/{self.mirror.get('name', self.name)}"


@dataclass(frozen=True)
class DatasetEntry:
    id: str
    paper_name: str
    papers: tuple
    group: str
    format: str
    files: tuple
    expected: dict
    paper: dict = field(default_factory=dict)
    positive: tuple | None = None
    classes: tuple | None = None
    bundled: bool = False
    label_column: int = -1
    n_features: int | None = None
    drop_constant_columns: bool = False
    deduplicate: bool = False
    differences: dict = field(default_factory=dict)
    notes: str = ""
    local: dict | None = None  # a user's own file: {format, target, positive} (``_local``)

    @property
    def is_binary(self):
        return self.positive is not None


# ``local`` is a user's own file's (``_local``), never the registry's.
_ENTRY_KEYS = {f for f in DatasetEntry.__dataclass_fields__ if f not in ("id", "local")}
_FILE_KEYS = set(FileSpec.__dataclass_fields__) - {"local"}


def _parse_entry(dataset_id, raw, source):
    if not isinstance(raw, dict):
        raise RegistryError(f"{source}: entry {dataset_id!r} must be a mapping")
    unknown = set(raw) - _ENTRY_KEYS
    if unknown:
        raise RegistryError(
            f"{source}: entry {dataset_id!r} has unknown key(s) {sorted(unknown)}; "
            f"valid keys are {sorted(_ENTRY_KEYS)}"
        )
    if raw.get("format") not in FORMATS:
        raise RegistryError(
            f"{source}: entry {dataset_id!r} has format {raw.get('format')!r}; allowed: {list(FORMATS)}"
        )
    if (raw.get("positive") is None) == (raw.get("classes") is None):
        raise RegistryError(f"{source}: entry {dataset_id!r} needs exactly one of 'positive' or 'classes'")
    files = []
    for f in raw.get("files", []):
        unknown = set(f) - _FILE_KEYS
        if unknown:
            raise RegistryError(
                f"{source}: entry {dataset_id!r}, file {f.get('name')!r} has unknown key(s) {sorted(unknown)}"
            )
        files.append(FileSpec(**{**f, "urls": tuple(f.get("urls", ()))}))
    values = dict(raw, files=tuple(files), papers=tuple(raw.get("papers", ())))
    for key in ("positive", "classes"):
        if values.get(key) is not None:
            values[key] = tuple(values[key])
    return DatasetEntry(id=dataset_id, **values)


@cache
def _registry():
    source = resources.files("eemrepro.datasets") / "registry.yaml"
    # libyaml's safe loader where PyYAML has one (the registry is read by every command that names a data set).
    raw = yaml.load(source.read_text(encoding="utf-8"), Loader=SAFE_LOADER)
    return {key: _parse_entry(key, value, "registry.yaml") for key, value in raw.items()}


def list_datasets(group=None, paper=None):
    """Ids of the registered data sets, in registry order.

    Parameters
    ----------
    group : str, optional
        Only this group (``uci``, ``highly-unbalanced``, ``extremely-unbalanced``,
        ``keel``, ``multiclass``, ...).
    paper : str, optional
        Only data sets of this paper (``eem``, ``melm``, ``esmm``, ``lssvm-ensemble``).

    Returns
    -------
    ids : list of str

    Examples
    --------
    >>> from eemrepro.datasets import list_datasets
    >>> list_datasets(group="uci")[:3]
    ['australian', 'breast-cancer', 'diabetes']
    """
    return [
        e.id
        for e in _registry().values()
        if (group is None or e.group == group) and (paper is None or paper in e.papers)
    ]


#: Local data sets this process has been told of (``register_local``): a config's ``local_datasets``.
_LOCAL = {}


def register_local(entry):
    """Make a local data set's entry (``_local.local_entry``) known to ``get_entry`` in this process."""
    if entry.id in _registry():
        raise RegistryError(f"local data set {entry.id!r} has the id of a registry data set; name it otherwise")
    _LOCAL[entry.id] = entry


def get_entry(name):
    """The registry entry of a data set; an unknown name suggests close ones."""
    if name in _LOCAL:
        return _LOCAL[name]
    registry = _registry()
    if name in registry:
        return registry[name]
    close = difflib.get_close_matches(str(name), list(registry), n=3, cutoff=0.5)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise UnknownDatasetError(
        f"unknown data set {name!r}.{hint} `eemrepro datasets list` shows all {len(registry)}."
    )
