"""The ``eemrepro`` command line (Typer; one module per subcommand).

Subcommands are registered in :mod:`eemrepro.cli._app`; heavy imports happen
inside each command so that ``eemrepro --help`` stays fast.
"""

from ._app import app


def main():
    """Console-script entry point."""
    app()


__all__ = ["app", "main"]
