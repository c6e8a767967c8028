"""``eemrepro models``: the estimators and their parameters."""

import typer


def list_models():
    from sklearn.base import clone

    from .. import models

    for name in models.__all__:
        obj = getattr(models, name)
        if not isinstance(obj, type) or issubclass(obj, Warning):
            continue
        params = ", ".join(f"{k}={v!r}" for k, v in clone(obj()).get_params().items())
        summary = (obj.__doc__ or "").strip().splitlines()[0]
        typer.echo(f"{name}({params})\n    {summary}")
