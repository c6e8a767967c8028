import typer


def fail(exc, code=1):
    typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code=code)


def flag(*names, **kwargs):
    """A boolean flag option (``--fresh``). Its help shows no value: a flag takes none (``--fresh=true`` is
    not a thing), which Typer's help otherwise suggests with a ``<bool>``."""
    return typer.Option(*names, metavar="", **kwargs)
