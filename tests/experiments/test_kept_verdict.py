"""A config's verdict on the package's own estimators, kept (issue 67: ``status`` of a small store within 1.5 s).

Reading a config asks each estimator whether it takes the values the config gives it (``_params.refusal``), which
imports the estimator and scikit-learn: about 1 s of a 2 s ``status``. For the package's own estimators the
answer "all taken" and the class attributes a plan reads (``TRAITS``) are kept (``eemrepro._kept``) under the
package's code, scikit-learn's version, the estimator and the values; the next read of the same config imports
neither. What is never kept: a refusal, a user's estimator's verdict, a verdict on other values.
"""

import json
import os
import subprocess
import sys

import pytest

from eemrepro import models
from eemrepro.experiments import ConfigError, load_config
from eemrepro.experiments._config import TRAITS
from tests.helpers import require_mirror, run_config, user_folder

CONFIG = """name: kept
datasets: [heart]
models:
  WELMsig: {{estimator: WELM, activation: sig, grid: {{n_hidden: [10, 20]}}}}
  SVMrbf: {{estimator: SVM, cache_size: 50, grid: {{C: {c}, gamma: [0.1]}}}}
protocol: {{folds: 2, repeats: 1}}
"""


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """The cache on (the suite runs with it off), in a folder of this test's."""
    folder = tmp_path / "kept"
    monkeypatch.setenv("EEMREPRO_CACHE", "1")
    monkeypatch.setenv("EEMREPRO_CACHE_DIR", str(folder))
    return folder / "kept-reports"  # (where the entries lie under EEMREPRO_CACHE_DIR)


def _config(tmp_path, c="[1.0, 10.0]", name="kept.yaml"):
    path = tmp_path / name
    path.write_text(CONFIG.format(c=c))
    return path


_STATUS = """import json, sys
from eemrepro.cli import main
sys.argv = ["eemrepro", "status", sys.argv[1]]
try:
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
print(json.dumps({"code": code, "sklearn": "sklearn" in sys.modules, "scipy": "scipy.stats" in sys.modules}))
"""


def _status(folder, env):
    proc = subprocess.run([sys.executable, "-c", _STATUS, str(folder)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **env})
    *table, verdict = proc.stdout.strip().splitlines()
    return json.loads(verdict), "\n".join(table), proc.stderr


@pytest.mark.slow
def test_status_of_an_unchanged_config_imports_no_scikit_learn_and_says_the_same(tmp_path):
    # The user's case of issue 67: `status` of a small store of the papers' estimators, called again and again.
    # The first call judges the values (scikit-learn imported); every later one reads the kept verdict and
    # prints the same table; with the cache off each call judges. Seen failing (sklearn imported every time)
    # while the models' package imported its classes and the metrics and splitters scikit-learn at import.
    require_mirror()
    out = tmp_path / "out"
    run_config(_config(tmp_path), out)
    env = {"EEMREPRO_CACHE": "1", "EEMREPRO_CACHE_DIR": str(tmp_path / "kept")}
    first, table, _ = _status(out, env)
    again, table_again, _ = _status(out, env)
    cold, table_cold, _ = _status(out, {"EEMREPRO_CACHE": "0"})
    assert first == {"code": 0, "sklearn": True, "scipy": True}
    assert again == {"code": 0, "sklearn": False, "scipy": False}
    assert cold == first
    assert "heart" in table and "4 of 4 units done" in table  # a unit per fold and model (each grid one path)
    assert table_again == table == table_cold


def test_a_kept_verdict_answers_for_the_values_it_judged_only(tmp_path, cache):
    # C = -1 is refused by the SVM's own check (C > 0). Kept under the estimator alone (not its values), the
    # verdict on [1, 10] would pass [1, -1]: planted once, this test failed.
    load_config(_config(tmp_path))
    assert list(cache.glob("*.pickle"))  # kept
    with pytest.raises(ConfigError, match=r"models\.SVMrbf\.grid\.C.*C.*-1"):
        load_config(_config(tmp_path, c="[1.0, -1.0]", name="other.yaml"))
    # A refusal is not kept: the same config is judged (and refused) again, and its neighbour still taken.
    with pytest.raises(ConfigError, match=r"-1"):
        load_config(_config(tmp_path, c="[1.0, -1.0]", name="other.yaml"))
    assert load_config(_config(tmp_path)).model("SVMrbf").grid == {"C": [1.0, 10.0], "gamma": [0.1]}


def test_the_kept_traits_are_the_classes_own(tmp_path, cache):
    # What a plan reads of a class (the grid parameter one fit_path covers, the speed-only parameters that stay
    # out of a record's identity) comes from the kept verdict on the second read, equal to the class's own.
    load_config(_config(tmp_path))
    config = load_config(_config(tmp_path))
    for name, cls in (("WELMsig", models.WELM), ("SVMrbf", models.SVM)):
        spec = config.model(name)
        assert spec.traits == {t: getattr(cls, t, None) for t in TRAITS}
    assert config.model("WELMsig").path_param == "n_hidden" and config.model("SVMrbf").path_param == "C"
    assert config.model("SVMrbf").trait("_speed_only_params") == ("cache_size",)


def test_a_users_estimator_is_judged_every_time(tmp_path, cache):
    # A user's class is not this package's code: its verdict is never kept (an edit of its constraints is
    # judged at once, even where the file's stat would not tell).
    folder, module = user_folder(tmp_path)
    path = folder / "c.yaml"
    path.write_text(f"name: u\ndatasets: [heart]\nprotocol: {{folds: 2, repeats: 1}}\n"
                    f"models:\n  Mine: {{estimator: '{module}:Centroid', grid: {{shrink: [0.0]}}}}\n")
    load_config(path)
    assert not list(cache.glob("*.pickle"))
    load_config(_config(tmp_path))  # (where the package's estimators' verdict is kept)
    assert list(cache.glob("*.pickle"))


def test_the_estimators_names_are_the_classes_with_fit():
    # ``models.ESTIMATORS`` says which public names a config may name without importing them; the classes say it
    # too once imported.
    import inspect

    assert models.ESTIMATORS == tuple(n for n in models.__all__
                                      if inspect.isclass(getattr(models, n)) and hasattr(getattr(models, n), "fit"))


def test_a_verdict_that_needs_an_optional_library_is_judged_again_once_it_is_gone(tmp_path, cache, monkeypatch):
    # SVM(solver='onedal') is taken only where scikit-learn-intelex imports. Its verdict kept under the package
    # and scikit-learn alone would pass after an uninstall (or from another environment sharing the cache) and
    # every fit would fail: the review of this change found it; planted once (JUDGES without it), this failed.
    from importlib import metadata

    from eemrepro.models import _svm

    real = metadata.version
    path = tmp_path / "onedal.yaml"
    path.write_text("name: o\ndatasets: [heart]\nprotocol: {folds: 2, repeats: 1}\n"
                    "models:\n  SVMod: {estimator: SVM, solver: onedal, grid: {C: [1.0]}}\n")
    monkeypatch.setattr(_svm, "_onedal_svc", lambda: object)  # installed
    monkeypatch.setattr(metadata, "version", lambda name: "2099.1" if name == "scikit-learn-intelex" else real(name))
    load_config(path)

    def gone():
        raise ValueError("SVM(solver='onedal') needs scikit-learn-intelex: pip install 'eemrepro[fast]'")

    def absent(name):
        if name == "scikit-learn-intelex":
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(_svm, "_onedal_svc", gone)
    monkeypatch.setattr(metadata, "version", absent)
    with pytest.raises(ConfigError, match=r"line 5: key 'models\.SVMod\.solver'.*needs scikit-learn-intelex"):
        load_config(path)


def test_an_estimator_that_cannot_be_imported_is_said_before_its_values(tmp_path, cache):
    # A name no import finds is the first thing to mend: said before a repeated grid value (the order before the
    # verdict was kept; the review found it reversed).
    path = tmp_path / "nope.yaml"
    path.write_text("name: n\ndatasets: [heart]\nprotocol: {folds: 2, repeats: 1}\n"
                    "models:\n  M: {estimator: 'nowhere_module_x:Nope', grid: {C: [1.0, 1.0]}}\n")
    with pytest.raises(ConfigError, match=r"models\.M\.estimator.*nowhere_module_x"):
        load_config(path)


def test_the_warnings_said_before_a_refusal_are_said_with_the_cache_on(tmp_path, cache, monkeypatch):
    # What a check warns of before it refuses is said as with the cache off (a kept piece's warnings were said
    # only when it was made whole).
    import warnings

    from eemrepro import _kept

    def make():
        warnings.warn("said before the refusal", UserWarning)
        raise ValueError("refused")

    with pytest.warns(UserWarning, match="said before the refusal"), pytest.raises(ValueError, match="refused"):
        _kept.kept("a piece that fails", make)
