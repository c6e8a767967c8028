"""Every data set of the four papers, by name, as the problem each paper studied.

``registry.yaml`` holds one entry per data set (sources, checksums, parser,
label mapping, the paper's sizes). Files come from the copy bundled with the
package, the cache, a mirror or the canonical hosts, always checksummed.
"""

from ._errors import (
    ChecksumError,
    DatasetError,
    DatasetParseError,
    DownloadError,
    RegistryError,
    UnknownDatasetError,
)
from ._fetch import get_data_home, get_mirror
from ._load import (
    Dataset,
    compare_with_paper,
    dataset_checksum,
    fetch_dataset,
    is_cached,
    load_dataset,
    minmax_scale,
    verify_cache,
)
from ._local import LocalDatasetError, local_entry
from ._registry import get_entry, list_datasets, register_local

__all__ = [
    "load_dataset",
    "list_datasets",
    "get_entry",
    "fetch_dataset",
    "dataset_checksum",
    "verify_cache",
    "is_cached",
    "minmax_scale",
    "compare_with_paper",
    "get_data_home",
    "get_mirror",
    "Dataset",
    "DatasetError",
    "UnknownDatasetError",
    "DownloadError",
    "ChecksumError",
    "DatasetParseError",
    "RegistryError",
    "LocalDatasetError",
    "local_entry",
    "register_local",
]
