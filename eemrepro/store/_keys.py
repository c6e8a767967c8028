"""A record's key and identity hash: what the store deduplicates on and resume matches.

A record is found again by its key (data set, model, grid point, repeat,
fold, inner fold) and its identity (``identity_sha``: everything else that
changed its values). The latest stored record of a key wins (a retried unit).
"""

import hashlib
import json

#: The fields that make a record's key, in the store's columns (``params`` as canonical JSON).
KEY_FIELDS = ("dataset", "model", "params", "repeat", "fold", "inner")


def point_id(point):
    """A grid point (a mapping of parameters) as canonical JSON."""
    return json.dumps(point, sort_keys=True)


def record_key(dataset, model, point, repeat, fold, inner):
    return f"{dataset}|{model}|{point_id(point)}|{repeat}|{fold}|{'-' if inner is None else inner}"


def stored_key(record):
    """The ``record_key`` of a stored record (what a unit lists for it)."""
    return record_key(record["dataset"], record["model"], record["params"], record["repeat"], record["fold"],
                      record["inner"])


def identity_sha(identity):
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]
