"""YAML documents a user hands the tool (configs, tolerance and pin files), read at a bounded cost.

A config is a few kilobytes of data, not a graph: before anything is built
from a document, its size, its expanded size (aliases counted as the copies
they stand for) and its duplicate keys are checked, so a hostile or mistyped
document is one clear error in well under a second, never minutes and
gigabytes. Only YAML's safe tags are accepted (``yaml.SafeLoader``, its libyaml build where
PyYAML has one). A report reads each results folder's config several times: a
document already read is not parsed again (its data is handed out as a copy).
"""

import copy
import functools

import yaml

#: YAML's safe loader, libyaml's build where PyYAML has one: it builds the same nodes (with their lines) as the
#: pure-Python one, several times faster.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: The largest document read (bytes).
MAX_BYTES = 1_000_000
#: The most nodes a document may stand for once its aliases are expanded.
MAX_NODES = 200_000


class YAMLDocumentError(ValueError):
    """A document that is not valid YAML, or not one the tool reads (too large, a duplicate key)."""


def _key_text(node):
    return node.value if isinstance(node, yaml.ScalarNode) else f"<{node.tag.rsplit(':', 1)[-1]}>"


def _expanded_size(root, limit):
    """The number of nodes ``root`` stands for with every alias expanded (counting stops past ``limit``)."""
    sizes = {}
    stack = [(root, False)]
    while stack:
        node, ready = stack.pop()
        if id(node) in sizes:
            continue
        children = []
        if isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        elif isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        if not ready:
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in sizes)
            continue
        # Shared (aliased) children count once per use: what a walk of the built data visits.
        sizes[id(node)] = min(limit + 1, 1 + sum(sizes.get(id(c), 1) for c in children))
    return sizes[id(root)]


def _check_keys(node, path, source, lines, seen):
    """Record each key's line; refuse a mapping that names a key twice."""
    if id(node) in seen:  # an alias of a node already checked
        return
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        first = {}
        for key, value in node.value:
            name = _key_text(key)
            line = key.start_mark.line + 1
            if name in first and name != "<<":
                where = ".".join(str(p) for p in (*path, name))
                raise YAMLDocumentError(f"{source}, line {line}: key '{where}': duplicate key "
                                        f"(first at line {first[name]}); a key may appear once")
            first[name] = line
            lines.setdefault((*path, name), line)
            _check_keys(value, (*path, name), source, lines, seen)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines.setdefault((*path, i), item.start_mark.line + 1)
            _check_keys(item, (*path, i), source, lines, seen)


def load_yaml(text, source="<document>"):
    """``(data, key lines)`` of one YAML document: ``key lines`` maps a key's path to its line.

    Raises :class:`YAMLDocumentError` (naming ``source`` and the line where
    known) for invalid YAML, a document over ``MAX_BYTES``, one whose aliases
    expand past ``MAX_NODES`` nodes, or a mapping with a duplicate key.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise YAMLDocumentError(f"{source}: not UTF-8 text (byte {exc.start})") from None
    if len(text.encode("utf-8", errors="replace")) > MAX_BYTES:
        raise YAMLDocumentError(f"{source}: {len(text)} characters; a document is at most {MAX_BYTES} bytes")
    return copy.deepcopy(_parse(text, source))


@functools.lru_cache(maxsize=16)
def _parse(text, source):
    loader = None
    try:
        loader = SAFE_LOADER(text)  # its reader refuses control characters at once
        node = loader.get_single_node()
        if node is None:
            return None, {}
        if _expanded_size(node, MAX_NODES) > MAX_NODES:
            raise YAMLDocumentError(f"{source}: its aliases expand to more than {MAX_NODES} values; "
                                    "a document is data, not a graph (use fewer or no anchors)")
        lines = {}
        _check_keys(node, (), source, lines, set())
        return loader.construct_document(node), lines
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f", line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or getattr(exc, "reason", None) or str(exc).splitlines()[0]
        raise YAMLDocumentError(f"{source}{at}: not valid YAML ({problem})") from None
    except RecursionError:
        raise YAMLDocumentError(f"{source}: nested too deeply") from None
    finally:
        if loader is not None:
            loader.dispose()


def load_yaml_file(path):
    """``load_yaml`` of a file (the size is checked before it is read)."""
    from pathlib import Path

    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise YAMLDocumentError(f"{path}: {size} bytes; a document is at most {MAX_BYTES} bytes")
        data = path.read_bytes()
    except OSError as exc:
        raise YAMLDocumentError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    return load_yaml(data, str(path))
