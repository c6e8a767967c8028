"""Reading stores written before record identities (eemrepro <= the EEM-only engine).

Such a record has ``gmean``/``bac``/``auc`` fields instead of a ``metrics``
mapping, ``dcs_gaussian``/``dcs_kde`` instead of ``criteria``, a ``protocol``
fingerprint (a hash of folds, seed and scaling) instead of an identity, and a
D_CS correlation record keeps its layer in ``fold``. ``upgrade`` rewrites one
record in memory (the files are never changed). Its identity is rebuilt from
the record itself (estimator, fixed parameters, number of betas) and from the
folder's ``config.yaml`` only where the fingerprint proves the config's folds,
seed and scaling are the ones the record was made with; otherwise, and for
inner-fold records (whose inner folds were not recorded), the identity says so
and never equals a config's, so such records are run again, never reused.
"""

import hashlib
import json
from functools import cache


def _fingerprint(folds, seed, scaling):
    key = {"folds": folds, "seed": seed, "scaling": scaling}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


@cache  # called once per record on every read of an old store
def _speed_only(estimator):
    # Which fixed parameters do not change results is the estimator's to say.
    # Stores from before the schema hold the package's own estimators only; a user's module is never imported.
    from ..models import estimator_class
    from ..models._lookup import is_builtin

    return getattr(estimator_class(estimator), "_speed_only_params", ()) if is_builtin(estimator) else ()


def upgrade(record, config_raw):
    """The record in today's schema; ``config_raw``: the folder's config.yaml as a mapping (or None)."""
    from ._keys import identity_sha

    r = dict(record)
    fingerprint = r.pop("protocol", None)
    proto = ((config_raw or {}).get("protocol") or {})
    folds, seed, scaling = proto.get("folds", 10), proto.get("seed", 0), proto.get("scaling", "global")
    r["metrics"] = {k: r.pop(k) for k in ("gmean", "bac", "auc") if k in r}
    r["criteria"] = {k: v for k in ("dcs_gaussian", "dcs_kde") if (v := r.pop(k, None)) is not None}
    if r["model"] == "dcs-correlation":
        r["kind"] = "dcs-correlation"
        r["params"] = {"layer": r["fold"], "n_hidden": r["params"]["n_hidden"]}
        r["fold"] = 0
        fixed = r.get("fixed_params") or {}
        identity = {"kind": "dcs-correlation", "activation": fixed.get("activation"),
                    "covariance": fixed.get("covariance"), "betas": len(r.get("dcs") or ()), "seed": seed}
    else:
        r["kind"] = "grid-search"
        identity = {"kind": "grid-search", "estimator": r.get("estimator"),
                    **{f"params.{k}": v for k, v in sorted((r.get("fixed_params") or {}).items())
                       if k not in _speed_only(r.get("estimator"))},
                    "splitter": "stratified-kfold", "folds": folds, "seed": seed, "scaling": scaling}
        if r.get("inner") is not None:
            identity["inner_folds"] = "unknown (stored before record identities)"
    if fingerprint != _fingerprint(folds, seed, scaling):
        identity["legacy_protocol"] = f"{fingerprint} (folds, seed, scaling unknown)"
    r["identity"] = identity
    r["identity_sha"] = identity_sha(identity)
    return r
