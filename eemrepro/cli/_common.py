import typer


def fail(exc, code=1):
    typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code=code)


def flag(*names, **kwargs):
    """A boolean flag option (``--fresh``). Its help shows no value: a flag takes none (``--fresh=true`` is
    not a thing), which Typer's help otherwise suggests with a ``<bool>``."""
    return typer.Option(*names, metavar="", **kwargs)


def existing_store(path):
    """Fail in one line unless ``path`` is a results folder that exists: a command that reads a store (or
    moves its records) never creates a mistyped path. The folders beside it with a close name are offered."""
    import difflib
    from pathlib import Path

    from ..store._files import is_store

    def results(p):
        return p.is_dir() and (is_store(p) or (p / "records").is_dir() or (p / "runs").is_dir())

    path = Path(path)
    if results(path):
        return path
    what = "no such folder" if not path.exists() else "not a results folder (what `eemrepro run` writes)"
    parent = path.parent if str(path.parent) else Path(".")
    # Only other results folders are offered: not the folder itself, nor one that is no store either.
    siblings = sorted(p.name for p in parent.iterdir() if p.name != path.name and results(p)) \
        if parent.is_dir() else []
    close = difflib.get_close_matches(path.name, siblings, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(str(parent / c) for c in close)}?" if close else ""
    fail(f"{path}: {what}{hint}")


def split_names(text, known=()):
    """The names of a comma-separated option (``--only-models a,b``): a name that itself holds ',' (the model
    ``SVM (balanced, entropy weights)``) is kept whole where ``known`` (the names it may be) has it; None for
    no option."""
    if text is None:
        return None
    pieces, names, i = text.split(","), [], 0
    while i < len(pieces):
        # The longest run of pieces that is a known name, else one piece (an unknown name, named as such later).
        j = next((j for j in range(len(pieces), i, -1) if ",".join(pieces[i:j]) in known), i + 1)
        names.append(",".join(pieces[i:j]))
        i = j
    return names


def results_folder(path):
    """The results folder ``path`` (``existing_store``) as its owner reads it (``experiments.ResultsFolder``):
    a config missing from a folder a run wrote, unreadable or not a config fails here in the one line every
    command says of it."""
    from ..experiments._run_folder import ResultsFolder
    from ..store import FolderConfigError

    folder = ResultsFolder(existing_store(path))
    try:
        folder.config()
    except FolderConfigError as exc:
        fail(exc)
    return folder
