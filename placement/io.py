"""Reading documents (JSON or YAML) and writing results atomically."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from .errors import InstanceError

__all__ = ["read_document", "write_json", "write_text", "write_bytes", "check_output_path"]


def read_document(path: str | os.PathLike) -> Any:
    """Parse a JSON (``.json``) or YAML (``.yaml``/``.yml``) file.

    Raises :class:`InstanceError` naming the file when it is missing or malformed.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InstanceError(str(p), "file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstanceError(str(p), f"cannot be read ({exc.__class__.__name__})") from None
    if p.suffix.lower() in (".yaml", ".yml"):
        import yaml

        try:
            return yaml.load(text, Loader=_unique_key_loader())  # noqa: S506 - a SafeLoader subclass
        except InstanceError as exc:
            raise InstanceError(f"{p} {exc.field}", exc.message) from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}" if mark is not None else ""
            raise InstanceError(str(p), f"is not valid YAML{where}") from None

    def unique_keys(pairs: list[tuple[str, Any]]) -> dict:
        out: dict = {}
        for key, value in pairs:
            if key in out:
                raise InstanceError(str(p), f"repeats the key {key!r} in one object (the first would be lost)")
            out[key] = value
        return out

    try:
        return json.loads(text, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as exc:
        raise InstanceError(str(p), f"is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None


def _unique_key_loader():
    """A ``yaml.SafeLoader`` that rejects a mapping repeating a key (plain YAML keeps the last)."""
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    raise InstanceError(f"line {key_node.start_mark.line + 1}",
                                        f"repeats the key {key!r} in one mapping (the first would be lost)")
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return UniqueKeyLoader


def check_output_path(path: str | os.PathLike, option: str = "-o") -> None:
    """An output file must name a file in an existing folder; checked before any work is done."""
    p = Path(path)
    if p.is_dir():
        raise InstanceError(option, f"{str(p)!r} is a folder; give a file name")
    if not p.parent.is_dir():
        raise InstanceError(option, f"folder {str(p.parent)!r} does not exist")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temporary file + rename), creating its folder.

    The file gets the permissions a plain ``open(path, "w")`` would (0666 less the umask).
    """
    p = Path(path)
    if p.is_dir():
        raise InstanceError(str(p), "is a folder; give a file name")
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_text(path: str | os.PathLike, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def write_json(path: str | os.PathLike, obj: Any) -> None:
    write_text(path, json.dumps(obj, indent=2, sort_keys=False) + "\n")
