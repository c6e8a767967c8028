"""Parsers on tiny committed fixtures (tests/data) and on garbled input."""

import numpy as np
import pytest

from eemrepro.datasets import DatasetParseError, load_dataset, minmax_scale
from eemrepro.datasets._parsers import PARSERS
from eemrepro.datasets._registry import get_entry

from tests.helpers import DATA


def test_keel_drops_null_rows_in_the_loader_and_reads_labels():
    X, labels = PARSERS["keel"]([DATA / "tiny_keel.dat"], get_entry("keel-ecoli4"))
    assert X.shape == (4, 2) and np.isnan(X[1, 1])
    assert list(labels) == ["positive", "negative", "negative", "negative"]


def test_kdd_bio_columns():
    X, y = PARSERS["kdd-bio"]([DATA / "bio_tiny.dat"], get_entry("protein-homology"))
    assert X.shape == (6, 74) and list(y) == [0, 0, 1, 0, 0, 0]


def test_covtype_columns():
    X, y = PARSERS["covtype"]([DATA / "covtype_tiny.data.gz"], get_entry("forest-cover"))
    assert X.shape == (12, 54) and sorted(set(y)) == [1, 2, 3, 5]


@pytest.mark.parametrize(
    "fmt,content,match",
    [
        ("csv", "1,2,g\n3,4,b\n5,6\n", r"line 3: expected 3 fields, found 2"),
        ("csv", "1,2,g\n3,x,b\n", r"line 2: 'x' is not a number"),
        ("keel", "@relation r\n@attribute a real\n1,positive\n", r"line 3: expected an @-header line or @data"),
        ("keel", "@relation r\n@attribute a real\n", "no @data line"),
        ("keel", "@relation r\n@data\n1,2,positive\n1,positive\n", r"line 4: expected 3 fields"),
        ("libsvm", "1 1:0.5 2:0.1\n-1 1:0.2 2:oops\n", r"line 2"),
        ("npz", b"PK\x03\x04 truncated", "not a readable benchmark .npz"),
        ("kdd-bio", "1\t2\t0\t0.5\n", "f.dat"),
    ],
)
def test_garbled_files_name_file_and_line(tmp_path, fmt, content, match):
    path = tmp_path / "f.dat"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    entry = get_entry({"csv": "ionosphere", "keel": "keel-ecoli4", "libsvm": "heart",
                       "npz": "ecoli", "kdd-bio": "protein-homology"}[fmt])
    with pytest.raises(DatasetParseError, match=match) as info:
        PARSERS[fmt]([path], entry)
    assert str(path) in str(info.value)


def test_minmax_scale_constant_feature_is_zero():
    # Closed form: (x - min) / (max - min), constant column -> 0.
    X = np.array([[1.0, 5.0, 2.0], [3.0, 5.0, 4.0], [2.0, 5.0, 3.0]])
    np.testing.assert_allclose(minmax_scale(X), [[0, 0, 0], [1, 0, 1], [0.5, 0, 0.5]])


def test_minmax_scale_with_reference_rows():
    # Per-fold scaling: min and range of the training rows, applied to others (closed form).
    train = np.array([[1.0, 5.0], [3.0, 5.0]])
    test = np.array([[2.0, 7.0], [5.0, 1.0]])
    np.testing.assert_allclose(minmax_scale(test, reference=train), [[0.5, 0.0], [2.0, 0.0]])


def test_bundled_set_needs_no_network_or_mirror(tmp_path):
    X, y, meta = load_dataset("sonar", data_home=tmp_path, mirror=tmp_path / "nowhere", scaling=None)
    assert X.shape == (208, 60) and meta["files"][0]["origin"] == "bundled"
    assert (y == 1).sum() == 97  # R (rock), the paper's positive class


def test_bad_scaling_value():
    with pytest.raises(ValueError, match="scaling must be one of"):
        load_dataset("heart", scaling="zscore")
