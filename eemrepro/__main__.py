"""``python -m eemrepro`` is the ``eemrepro`` command."""

from .cli import main

main()
