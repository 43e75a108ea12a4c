"""The merged filesystem of an image: layers applied in order, as overlayfs would show them.

Rules (those of the OCI image spec and of Docker's layer unpacking):
- a `.wh.NAME` member removes NAME (and everything under it) from the layers below; a
  `.wh..wh..opq` member empties its folder of what the layers below put there; both apply
  before the layer's own entries, whatever their order in the tar;
- a member path is cleaned as Docker does: leading `/` and `./` dropped; a path whose `..`
  climbs above the root is refused (Docker refuses such a layer), as is a hard link to one;
- a non-folder replaces whatever was there (a folder with all its contents); a folder over a
  folder merges; a folder created under a path that a lower layer made a symbolic link hides
  that link (overlayfs shows the upper folder);
- hard links share the data of their target (looked up in the tree built so far);
- symbolic links are kept as text and resolved only inside the tree: an absolute target starts
  again at the image root, `..` stops at the root, at most `max_symlink_hops` links are followed.
"""

from __future__ import annotations

from dataclasses import dataclass

from wheeldoc.core.errors import InputError, LimitExceeded
from wheeldoc.image.blobs import Limits
from wheeldoc.image.tar import TarMember

WHITEOUT = ".wh."
OPAQUE = ".wh..wh..opq"


@dataclass(frozen=True, slots=True)
class Node:
    """One path of the merged tree."""

    type: str  # file, dir, symlink, char, block, fifo, sparse, other
    mode: int
    size: int
    layer: int  # index of the layer whose data it is (-1: implied folder)
    offset: int  # offset of the data in that layer's uncompressed tar
    link: str | None = None  # symbolic link target, as written


ROOT_NODE = Node("dir", 0o755, 0, -1, 0)


class PathEscape(Exception):
    pass


def clean(name: str, limits: Limits) -> str:
    """`/usr/lib/x` from `./usr/lib/x`, `usr//lib/x/`, `/usr/lib/x`; PathEscape above the root."""
    if len(name) > limits.max_path_length:
        raise LimitExceeded("<path>", f"path of {len(name):,} characters (limit {limits.max_path_length:,})")
    parts: list[str] = []
    for p in name.split("/"):
        if p in ("", "."):
            continue
        if p == "..":
            if not parts:
                raise PathEscape(name)
            parts.pop()
            continue
        parts.append(p)
    if len(parts) > limits.max_path_depth:
        raise LimitExceeded("<path>", f"path {len(parts)} folders deep (limit {limits.max_path_depth})")
    return "/" + "/".join(parts)


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0] or "/"


def _base(path: str) -> str:
    return path.rsplit("/", 1)[1]


class Tree:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.nodes: dict[str, Node] = {"/": ROOT_NODE}
        self.children: dict[str, set[str]] = {"/": set()}
        self.warnings: list[str] = []

    # -- building ------------------------------------------------------------------------
    def apply_layer(self, layer: int, members: list[TarMember], where: str) -> None:
        cleaned: list[tuple[str, TarMember]] = []
        for m in members:
            try:
                path = clean(m.name, self.limits)
            except PathEscape:
                raise InputError(where, f"member {m.name!r} climbs out of the image root with '..' "
                                        "(Docker refuses such a layer)", member=m.name) from None
            except LimitExceeded as e:
                raise LimitExceeded(where, e.message, member=m.name[:200]) from None
            cleaned.append((path, m))
        for path, m in cleaned:  # whiteouts first: they only hide what lower layers made
            if path == "/":
                continue
            base = _base(path)
            if base == OPAQUE:
                self._clear(_parent(path))
            elif base == WHITEOUT:  # names nothing: removing "" would remove the folder itself
                self.warnings.append(f"layer {layer}: whiteout {path} names no file; ignored")
            elif base.startswith(WHITEOUT) and not base.startswith(".wh..wh."):
                self._remove(_parent(path) + ("/" if _parent(path) != "/" else "") + base[len(WHITEOUT):])
        for path, m in cleaned:
            base = "" if path == "/" else _base(path)
            if base.startswith(WHITEOUT):
                continue
            if m.type == "hardlink":
                node = self._hardlink(layer, path, m, where)
                if node is None:
                    continue
            else:
                node = Node(m.type, m.mode, m.size, layer, m.offset, m.linkname if m.type == "symlink" else None)
            if path == "/":
                if node.type == "dir":
                    self.nodes["/"] = node
                continue
            self._put(path, node, layer)

    def _hardlink(self, layer: int, path: str, m: TarMember, where: str) -> Node | None:
        try:
            target = clean(m.linkname, self.limits)
        except PathEscape:
            raise InputError(where, f"hard link {m.name!r} -> {m.linkname!r} points out of the image root",
                             member=m.name) from None
        node = self.nodes.get(target)
        if node is None or node.type not in ("file", "sparse", "other"):
            self.warnings.append(f"layer {layer}: hard link {path} -> {target}: target is not a file; skipped")
            return None
        return Node(node.type, m.mode or node.mode, node.size, node.layer, node.offset)

    def _put(self, path: str, node: Node, layer: int) -> None:
        parent = _parent(path)
        self._ensure_dir(parent, layer)
        old = self.nodes.get(path)
        if old is not None:
            if old.type == "dir" and node.type == "dir":
                self.nodes[path] = node
                return
            self._remove(path)
        self.nodes[path] = node
        self.children[parent].add(_base(path))
        if node.type == "dir":
            self.children[path] = set()

    def _ensure_dir(self, path: str, layer: int) -> None:
        node = self.nodes.get(path)
        if node is not None and node.type == "dir":
            return
        if path != "/":
            self._ensure_dir(_parent(path), layer)
        if node is not None:  # a file or link below is hidden by this layer's folder
            self._remove(path)
        self.nodes[path] = Node("dir", 0o755, 0, layer, 0)
        self.children[path] = set()
        if path != "/":
            self.children[_parent(path)].add(_base(path))

    def _remove(self, path: str) -> None:
        node = self.nodes.pop(path, None)
        if node is None:
            return
        if node.type == "dir":
            self._clear(path)
            self.children.pop(path, None)
        self.children.get(_parent(path), set()).discard(_base(path))

    def _clear(self, path: str) -> None:
        names = self.children.get(path)
        if not names:
            return
        stack = [path + "/" + n if path != "/" else "/" + n for n in names]
        names.clear()
        while stack:
            p = stack.pop()
            node = self.nodes.pop(p, None)
            if node is not None and node.type == "dir":
                stack.extend(p + "/" + n for n in self.children.pop(p, ()))

    # -- reading -------------------------------------------------------------------------
    def resolve(self, path: str, *, follow: bool = True) -> str | None:
        """The tree path that `path` names once symbolic links are followed; None if missing.

        Raises `InputError` for a link loop (more than `max_symlink_hops` links)."""
        todo = [p for p in reversed(path.split("/")) if p not in ("", ".")]
        cur = "/"
        hops = 0
        while todo:
            part = todo.pop()
            if part == "..":
                cur = _parent(cur)
                continue
            nxt = cur + part if cur == "/" else cur + "/" + part
            node = self.nodes.get(nxt)
            if node is None:
                return None
            if node.type == "symlink" and (todo or follow):
                hops += 1
                if hops > self.limits.max_symlink_hops:
                    raise InputError(path, f"more than {self.limits.max_symlink_hops} symbolic links "
                                           "(a link loop?)")
                target = node.link or ""
                if target.startswith("/"):
                    cur = "/"
                todo.extend(p for p in reversed(target.split("/")) if p not in ("", "."))
                continue
            if todo and node.type != "dir":
                return None
            cur = nxt
        return cur

    def node(self, path: str, *, follow: bool = True) -> Node | None:
        real = self.resolve(path, follow=follow)
        return None if real is None else self.nodes.get(real)
