"""Where the report commands write, and how: never into a store's own files, never through a symbolic link,
never over a file they did not write (unless told to).

``tables``, ``figures``, ``report`` and ``export`` write a user's outputs. A
store (``results/<name>``) is the runner's: its records, run files and config
are read by every other command, so an output folder inside one is refused
except the folders the commands write by default (``<store>/tables``,
``<store>/figures``, ``<store>/report``). Files are built in a staging folder
and moved into place (``os.replace`` replaces a link, never writes through
it); an output folder's manifest records which files the command wrote, and
any other file of the same name is left alone unless ``force``.
"""

import json
import os
from pathlib import Path

#: The folders inside a store that the report commands write by default.
OUTPUT_FOLDERS = ("tables", "figures", "report")


class OutputPlaceError(ValueError):
    """An output path inside a store's own files, or a symbolic link."""


class FilesExistError(ValueError):
    """The output folder holds files of the same names that this command did not write from these results."""


def check_place(path, what="output"):
    """Refuse (:class:`OutputPlaceError`) ``path`` (an output folder or file) inside a store other than as one
    of its ``OUTPUT_FOLDERS``, or a symbolic link."""
    from ..store._files import is_store

    path = Path(os.path.abspath(path))
    if path.is_symlink():
        raise OutputPlaceError(f"{path} is a symbolic link; the {what} is never written through one: name the "
                               "folder it points to, or another")
    for folder in (path, *path.parents):
        if folder.is_dir() and is_store(folder):
            inside = path.relative_to(folder).parts
            if len(inside) == 1 and inside[0] in OUTPUT_FOLDERS and not path.is_file():
                return
            raise OutputPlaceError(
                f"{path} is inside the results folder {folder}, whose files the store keeps; write the {what} "
                f"elsewhere (or into {folder}/tables, /figures or /report)")


def publish(built, out, manifest, sources, force, command):
    """Move the files ``built`` (in a staging folder) into ``out``; return their new paths.

    ``manifest``: the file of ``out`` recording which results folders each file was written from
    (``sources``); a file of ``out`` of the same name that it does not record as written from these (another
    store's, or a user's) is not replaced unless ``force``: :class:`FilesExistError` names them and nothing
    moves.
    """
    out = Path(out)
    manifest_path = out / manifest
    try:
        recorded = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
    except ValueError:
        recorded = {}
    owners = recorded.get("files", {}) if isinstance(recorded, dict) else {}
    clash = [p.name for p in built
             if ((out / p.name).exists() or (out / p.name).is_symlink()) and owners.get(p.name) != sources]
    if clash and not force:
        others = sorted({", ".join(owners[n]) for n in clash if n in owners})
        raise FilesExistError(
            f"{out} already holds {len(clash)} file(s) this command would overwrite "
            f"({', '.join(clash[:4])}{' ...' if len(clash) > 4 else ''}), written from "
            f"{'; '.join(others) if others else 'results it does not know (or not by eemrepro)'}; write elsewhere "
            "with --out, or overwrite them with --force")
    written = []
    for p in built:
        os.replace(p, out / p.name)
        written.append(out / p.name)
        owners[p.name] = sources
    tmp = manifest_path.with_name(manifest + ".tmp")
    tmp.write_text(json.dumps({"written_by": command, "files": dict(sorted(owners.items()))}, indent=1) + "\n")
    os.replace(tmp, manifest_path)
    return written
