"""One small name -> object registry, shared by the metrics, criteria and experiment kinds."""


class Registry:
    def __init__(self, what):
        self.what = what
        self._items = {}

    def register(self, item):
        """Add ``item`` under its ``name`` (replacing one of the same name); return it."""
        self._items[item.name] = item
        return item

    def get(self, name):
        try:
            return self._items[name]
        except KeyError:
            raise ValueError(f"unknown {self.what} {name!r}; known: {sorted(self._items)}") from None

    def names(self):
        return list(self._items)

    def values(self):
        return list(self._items.values())
