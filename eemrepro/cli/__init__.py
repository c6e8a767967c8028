"""The ``eemrepro`` command line (Typer; one module per subcommand).

Subcommands are registered in :mod:`eemrepro.cli._app`; heavy imports happen
inside each command so that ``eemrepro --help`` stays fast.
"""

import typer

from ._app import app


def main():
    """Console-script entry point."""
    import warnings

    from ..store import StoreWarning

    def show(message, category, filename, lineno, file=None, line=None):
        # A damaged part of a store is one line for the user, not a source listing.
        if issubclass(category, StoreWarning):
            typer.secho(f"warning: {message}", fg=typer.colors.YELLOW, err=True)
        else:
            default(message, category, filename, lineno, file, line)

    default = warnings.showwarning
    warnings.showwarning = show
    app()


__all__ = ["app", "main"]
