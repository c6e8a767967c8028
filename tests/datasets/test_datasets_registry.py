"""The registry: well-formed, complete, and its sizes agree with the paper's tables."""

import csv
import os
from pathlib import Path

import pytest

import eemrepro.papers
from eemrepro.datasets import UnknownDatasetError, get_entry, list_datasets
from eemrepro.datasets._registry import _parse_entry

from tests.helpers import require_mirror

EEM_TABLE3 = [
    "australian", "breast-cancer", "diabetes", "german.numer", "heart", "liver-disorders", "sonar", "splice",
    "abalone7", "arrhythmia", "car-evaluation", "ecoli", "libras-move", "oil-spill", "sick-euthyroid",
    "solar-flare", "spectrometer", "forest-cover", "isolet", "mammography", "protein-homology", "webpages",
]


def test_every_paper_dataset_is_registered():
    ids = set(list_datasets())
    # EEM Table 3 (less "bank", used in no result table) + ionosphere and balance (Table 1).
    assert set(EEM_TABLE3) | {"ionosphere", "balance"} <= ids
    assert {"fourclass", "cardiotocography", "sensor-readings-4", "wine"} <= ids
    assert len(list_datasets(group="keel")) == 25


def test_paper_sizes_match_the_published_table_3():
    # The published tables as shared beside the checkout, else the package's own copy of them: never a skip.
    published = Path(__file__).resolve().parents[3] / "shared" / "published" / "eem_table3_datasets.csv"
    if not published.is_file():
        if os.environ.get("EEMREPRO_REQUIRE_MIRROR"):
            pytest.fail(f"{published} not found (required: EEMREPRO_REQUIRE_MIRROR is set)")
        published = Path(eemrepro.papers.__file__).parent / "published" / "eem_table3_datasets.csv"
    with open(published) as fh:
        rows = {r["dataset"]: r for r in csv.DictReader(fh)}
    for name in EEM_TABLE3:
        paper = get_entry(name).paper
        row = rows[name]
        assert paper == {"d": int(row["d"]), "n_neg": int(row["n_neg"]), "n_pos": int(row["n_pos"])}, name


def test_every_difference_from_the_paper_is_explained():
    for name in list_datasets():
        e = get_entry(name)
        for key, value in e.paper.items():
            if key in e.expected and e.expected[key] is not None and e.expected[key] != value:
                assert key in e.differences, f"{name}: {key} differs from the paper without explanation"


def test_unknown_name_suggests_close_names():
    with pytest.raises(UnknownDatasetError, match="Did you mean 'abalone7'"):
        get_entry("abalone")


def test_registry_rejects_typos():
    with pytest.raises(Exception, match="unknown key"):
        _parse_entry("x", {"format": "csv", "positive": [1], "files": [], "expected": {}, "postive": 1}, "test")
    with pytest.raises(Exception, match="format"):
        _parse_entry("x", {"format": "arff", "positive": [1], "files": [], "expected": {}}, "test")


def test_filters():
    assert list_datasets(group="uci")[0] == "australian"
    assert "fourclass" in list_datasets(paper="melm")
    assert all(get_entry(n).group == "keel" for n in list_datasets(paper="esmm"))


def test_mirror_copy_checksums_match_the_registry():
    mirror = require_mirror()
    sums = {}
    for listing in (mirror / "SHA256SUMS", mirror / "keel" / "SHA256SUMS"):
        prefix = "keel/" if listing.parent.name == "keel" else ""
        for line in listing.read_text().splitlines():
            digest, path = line.split()
            sums[prefix + path.removeprefix("./")] = digest
    for name in list_datasets():
        for spec in get_entry(name).files:
            rel = spec.mirror_path(name)
            if rel in sums:
                assert sums[rel] == spec.mirror.get("sha256", spec.sha256), rel
