"""Reading documents (JSON or YAML) and writing results atomically."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from .errors import InstanceError

__all__ = ["read_document", "write_json", "write_text", "write_bytes"]


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
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}" if mark is not None else ""
            raise InstanceError(str(p), f"is not valid YAML{where}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InstanceError(str(p), f"is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temporary file + rename)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
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
