"""The ``eemrepro`` command line (Typer; one module per subcommand).

Subcommands are registered in :mod:`eemrepro.cli._app`; heavy imports happen
inside each command so that ``eemrepro --help`` stays fast.
"""

import gc
import sys

import typer

from ._app import app


def main():
    """Console-script entry point."""
    import warnings

    def show(message, category, filename, lineno, file=None, line=None):
        # A damaged part of a store, or a weak protocol, is one line for the user, not a source listing. Their
        # modules are looked up, not imported: only a command that read a store or a config (and so imported it)
        # can warn about one, and `--help`, `--version` stay clear of pandas and Arrow (issue 67: within 0.3 s).
        said = [getattr(sys.modules.get(module), name, None) for module, name in
                (("eemrepro.store._segments", "StoreWarning"), ("eemrepro.experiments._config", "ProtocolWarning"))]
        if any(kind is not None and issubclass(category, kind) for kind in said):
            typer.secho(f"warning: {message}", fg=typer.colors.YELLOW, err=True)
        else:
            default(message, category, filename, lineno, file, line)

    default = warnings.showwarning
    warnings.showwarning = show
    from . import _app

    try:
        app()
    except KeyboardInterrupt:
        typer.secho("interrupted", fg=typer.colors.YELLOW, err=True)
        raise SystemExit(130) from None
    except Exception as exc:  # every expected error is already one line; this is the safety net
        if _app.DEBUG:
            raise
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        typer.secho(f"error: {type(exc).__name__}: {first} (eemrepro --debug ... shows the traceback)",
                    fg=typer.colors.RED, err=True)
        raise SystemExit(1) from None
    finally:
        # Arrow's readers (the store's Parquet segments) may leave objects in reference cycles whose native
        # threads, freed only at interpreter teardown, abort the process after its work is done ("terminate
        # called without an active exception", exit 134: apache/arrow#34314; seen once at the end of CI's `store
        # verify`). Collected here, while Arrow is still alive.
        gc.collect()


__all__ = ["app", "main"]
