"""The timeout ledger: the one place ``protocol.after_timeout`` is written down.

A fit that runs past ``fit_timeout`` (or, under ``skip-model``, one that runs
out of memory) *abandons* something: under ``skip`` its grid point on the
other folds, under ``skip-model`` the whole model on that data set, under
``run`` nothing. The run's main loop, a worker's batch of units, a unit's own
points (``_watchdog.run_points``) and a resumed run's stored records all ask
this ledger, so that the rule cannot read one way in one place and another
way in the next. Every kind puts the rule into its tasks in one layout: the
task's top-level ``after_timeout`` (``_runner.unit_task``).
"""

from ._units import point_id, record_cell

RULES = ("skip", "skip-model", "run")


def out_of_memory(fields):
    """Whether a record's fields say its fit failed for lack of memory."""
    return fields.get("status") == "failed" and str(fields.get("error") or "").startswith("MemoryError")


class TimeoutLedger:
    """What the run's timed-out fits have abandoned so far, under one ``after_timeout`` rule."""

    def __init__(self, rule="skip"):
        if rule not in RULES:
            raise ValueError(f"after_timeout must be one of {', '.join(RULES)}, got {rule!r}")
        self.rule = rule
        self.abandoned = set()

    @classmethod
    def of(cls, task):
        """A fresh ledger under a task's rule (the layout every kind's task has)."""
        return cls(task["after_timeout"])

    def key(self, dataset, model, point):
        """What a timed-out fit of ``point`` abandons: the point (``skip``) or the model (``skip-model``)."""
        return (dataset, model) if self.rule == "skip-model" else (dataset, model, point)

    def abandons(self, fields):
        """Whether a record (its ``status`` and ``error``) abandons its key: a fit past the time budget;
        under ``skip-model`` also one out of memory. Never under ``run``."""
        if self.rule == "run":
            return False
        return fields.get("status") == "timed-out" or (self.rule == "skip-model" and out_of_memory(fields))

    def note(self, dataset, model, point, fields):
        """Take one fit's outcome into account."""
        if self.abandons(fields):
            self.abandoned.add(self.key(dataset, model, point))

    def note_records(self, records):
        """Take a unit's records (dicts as a worker returns them) into account."""
        for r in records:
            if self.abandons(r):  # the point's id (a JSON text) only for the records that abandon something
                self.abandoned.add(self.key(r["dataset"], r["model"], point_id(r["params"])))

    def note_stored(self, stored, shas):
        """Take a store frame's timed-out and failed records into account, those made under their cell's
        identity now (``shas``: {(data set, model, is inner): identity sha}): a resumed run keeps what its
        first part abandoned."""
        if self.rule == "run" or stored.empty:
            return
        stopped = stored[stored["status"].isin(["timed-out", "failed"])]
        for r in stopped.to_dict("records"):
            if r["identity_sha"] == shas.get(record_cell(r)):
                self.note(r["dataset"], r["model"], r["point"], {**r, "error": r.get("error_message")})

    def skips(self, dataset, model, point):
        """Whether ``point`` of ``model`` on ``dataset`` is abandoned (recorded as skipped, not run)."""
        return bool(self.abandoned) and self.key(dataset, model, point) in self.abandoned

    def skip_points(self, task):
        """The points of a task this ledger abandons, beside those the task skips already."""
        if not self.abandoned:
            return task["skip_points"]
        more = [p for p in task["points"] if self.skips(task["dataset"], task["model"], point_id(p))]
        return [*task["skip_points"], *(p for p in more if p not in task["skip_points"])]
