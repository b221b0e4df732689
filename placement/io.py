"""Reading documents (JSON or YAML) and writing results atomically.

Every document enters through :func:`read_document`, which enforces limits
*before* and *while* parsing, so that no input -- however large, deep or
strange -- can hang the process, exhaust memory or escape as a traceback:

==========================  =============================================  ==========================
limit                        default                                        override
==========================  =============================================  ==========================
file size                    64 MiB                                         ``PLACEMENT_MAX_INPUT_BYTES``
YAML file size               1 MiB (~3 s and ~240 MB per MiB to parse)      ``PLACEMENT_MAX_YAML_BYTES``
nesting depth                64 levels of lists/objects                     ``max_depth=``
integer digits               30 (every accepted integer is <= 2**53)        --
values (YAML)                5,000,000 values, aliases expanded              ``max_nodes=``
values (JSON)                bounded by the file size (no aliases)          ``max_nodes=``
mapping keys                 strings or numbers (YAML), strings (JSON)       --
==========================  =============================================  ==========================

YAML merge keys (``<<: *base``) are accepted; a key repeated in one mapping is
an error (plain YAML would silently keep the last one). Every violation is one
:class:`InstanceError` naming the file.

Writing: :func:`write_bytes` writes a temporary file in the target folder,
``fsync``\\ s it, renames it over the target and ``fsync``\\ s the folder, so a
result reported as written survives a crash or power cut. An existing target
keeps its permission bits; a new file gets ``0666`` less the umask. Temporary
files are named ``.NAME.<pid>.<random>.tmp``; one left behind by a process that
no longer runs (a kill at the rename) is removed by the next write of ``NAME``.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Any

from .errors import InstanceError

__all__ = ["read_document", "parse_document", "dumps_json", "write_json", "write_text", "write_bytes", "check_output_path", "check_output_folder", "staged_folder",
           "commit", "outputs_committed", "reset_commit",
           "max_input_bytes", "max_yaml_bytes", "MAX_DEPTH", "MAX_NODES", "MAX_INT_DIGITS"]

DEFAULT_MAX_INPUT_BYTES = 64 * 2**20
MAX_DEPTH = 64
MAX_NODES = 5_000_000
MAX_INT_DIGITS = 30


def _env_bytes(name: str, default: int) -> int:
    """A byte limit from the environment variable ``name`` (a positive integer), else ``default``."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InstanceError(name, f"must be a positive integer, got {raw!r}") from None
    if value < 1:
        raise InstanceError(name, f"must be a positive integer, got {raw!r}")
    return value


def max_input_bytes() -> int:
    """The file-size limit: ``PLACEMENT_MAX_INPUT_BYTES`` (bytes) or 64 MiB."""
    return _env_bytes("PLACEMENT_MAX_INPUT_BYTES", DEFAULT_MAX_INPUT_BYTES)


DEFAULT_MAX_YAML_BYTES = 2**20


def max_yaml_bytes() -> int:
    """The size limit of a YAML file: ``PLACEMENT_MAX_YAML_BYTES`` (bytes) or 1 MiB. Parsing YAML
    costs about 3 s and 240 MB per MiB of a list-heavy document even with libyaml's C parser
    (the pure-Python one: a 50 MB document took 40 s and 1.3 GB before a loader could refuse it);
    HiveD configs and sweep specs are a few KB, and JSON keeps the 64 MiB limit."""
    return _env_bytes("PLACEMENT_MAX_YAML_BYTES", DEFAULT_MAX_YAML_BYTES)


def read_document(path: str | os.PathLike, *, max_depth: int = MAX_DEPTH, max_nodes: int | None = None) -> Any:
    """Parse a JSON (``.json``) or YAML (``.yaml``/``.yml``; anything else is read as JSON) file.
    ``max_nodes``: see :func:`parse_document`.

    Raises :class:`InstanceError` naming the file when it is missing, unreadable,
    too large, malformed or beyond the limits of the module docstring.
    """
    p = Path(path)
    limit = max_input_bytes()
    try:
        with open(p, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise InstanceError(str(p), "must be a regular file")
            data = fh.read(limit + 1)
    except FileNotFoundError:
        raise InstanceError(str(p), "file not found") from None
    except IsADirectoryError:
        raise InstanceError(str(p), "is a folder; give a file") from None
    except OSError as exc:
        raise InstanceError(str(p), f"cannot be read ({exc.strerror or exc.__class__.__name__})") from None
    if len(data) > limit:
        raise InstanceError(str(p), f"is larger than {limit} bytes (the input limit; set "
                                    "PLACEMENT_MAX_INPUT_BYTES to raise it)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InstanceError(str(p), "is not UTF-8 text") from None
    yaml_file = p.suffix.lower() in (".yaml", ".yml")
    if yaml_file and len(data) > max_yaml_bytes():
        raise InstanceError(str(p), f"is larger than {max_yaml_bytes()} bytes, the limit for YAML (its parser "
                                    "is slow; give JSON, or set PLACEMENT_MAX_YAML_BYTES to raise it)")
    return parse_document(text, str(p), yaml_file=yaml_file, max_depth=max_depth, max_nodes=max_nodes)


def parse_document(text: str, where: str = "document", *, yaml_file: bool = False, max_depth: int = MAX_DEPTH,
                   max_nodes: int | None = None) -> Any:
    """Parse JSON or YAML text under the limits of this module (``where`` names it in errors).
    ``max_nodes`` (values after YAML aliases) defaults to :data:`MAX_NODES` for YAML, whose aliases
    can multiply a small file (an alias bomb); JSON has no aliases, so its values are bounded by its
    size (at most one per two bytes: a 7-day MAST week of 220,072 workloads holds 5.2 million)."""
    if yaml_file:
        doc = _parse_yaml(text, where, max_depth)
    else:
        doc = _parse_json(text, where, max_depth)
    _check_shape(doc, where, max_depth, max_nodes if max_nodes is not None else
                 MAX_NODES if yaml_file else len(text) // 2 + 1)
    return doc


def _json_depth_ok(text: str, max_depth: int) -> int:
    """The deepest bracket nesting outside strings, computed without recursion (stops past the limit)."""
    depth = deepest = 0
    # Strings are removed first so that brackets inside them do not count.
    for m in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', text):
        tok = m.group()
        if tok in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > max_depth:
                    return deepest
        elif tok in "]}":
            depth -= 1
    return deepest


def _int_token(where: str):
    def parse_int(s: str) -> int:
        if len(s.lstrip("-")) > MAX_INT_DIGITS:
            raise InstanceError(where, f"has an integer with more than {MAX_INT_DIGITS} digits "
                                       f"(integers must be at most 2**53)")
        return int(s)
    return parse_int


def _parse_json(text: str, where: str, max_depth: int) -> Any:
    if _json_depth_ok(text, max_depth) > max_depth:
        raise InstanceError(where, f"nests lists or objects deeper than {max_depth} levels")

    def unique_keys(pairs: list[tuple[str, Any]]) -> dict:
        out: dict = {}
        for key, value in pairs:
            if key in out:
                raise InstanceError(where, f"repeats the key {key!r} in one object (the first would be lost)")
            out[key] = value
        return out

    try:
        return json.loads(text, object_pairs_hook=unique_keys, parse_int=_int_token(where),
                          parse_constant=lambda c: _reject_constant(where, c))
    except json.JSONDecodeError as exc:
        raise InstanceError(where, f"is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:  # defensive: the depth scan above should make this unreachable
        raise InstanceError(where, f"nests lists or objects deeper than {max_depth} levels") from None


def _reject_constant(where: str, c: str):
    raise InstanceError(where, f"has {c}, which is not a JSON number")


def _parse_yaml(text: str, where: str, max_depth: int) -> Any:
    import yaml

    # libyaml's C parser where PyYAML has it: about 6x faster than the pure-Python one on large
    # documents (a 4 MB list: 3 s instead of 18 s). libyaml refuses nesting past 1,000 levels
    # itself and _check_shape refuses past max_depth; the pure-Python loader counts as it composes.
    fast = bool(getattr(yaml, "__with_libyaml__", False))
    try:
        return yaml.load(text, Loader=_limited_loader(where, max_depth, fast))  # noqa: S506 - safe loaders
    except InstanceError:
        raise
    except RecursionError:
        raise InstanceError(where, f"nests lists or mappings deeper than {max_depth} levels") from None
    except yaml.YAMLError as exc:
        if "maximum nesting depth" in str(getattr(exc, "problem", "")):  # libyaml's own cap (1,000)
            raise InstanceError(where, f"nests lists or mappings deeper than {max_depth} levels") from None
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None)
        raise InstanceError(where, f"is not valid YAML{at}" + (f" ({problem})" if problem else "")) from None


def _limited_loader(where: str, max_depth: int, fast: bool = False):
    """A safe YAML loader with bounded integers, scalar keys and no repeated keys; the pure-Python
    one also limits depth as it composes (``fast``: libyaml's ``CSafeLoader``, whose caller bounds
    the depth from the text first; :func:`_check_shape` checks depth again after either)."""
    import yaml

    base = yaml.CSafeLoader if fast else yaml.SafeLoader

    class LimitedLoader(base):
        _depth = 0

        def compose_node(self, parent, index):
            self._depth += 1
            if self._depth > max_depth:
                mark = self.peek_event().start_mark
                raise InstanceError(f"{where} line {mark.line + 1}",
                                    f"nests lists or mappings deeper than {max_depth} levels")
            try:
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

        def construct_yaml_int(self, node):
            digits = str(node.value).lstrip("+-").replace("_", "")
            if len(digits) > MAX_INT_DIGITS:
                raise InstanceError(f"{where} line {node.start_mark.line + 1}",
                                    f"has an integer with more than {MAX_INT_DIGITS} digits")
            return super().construct_yaml_int(node)

        def construct_mapping(self, node, deep=False):
            seen = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # `<<: *base` merges; the mapping's own keys override merged ones
                if not isinstance(key_node, yaml.ScalarNode):
                    raise InstanceError(f"{where} line {key_node.start_mark.line + 1}",
                                        "a mapping key must be a string or a number, not a list or mapping")
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    raise InstanceError(f"{where} line {key_node.start_mark.line + 1}",
                                        f"repeats the key {key!r} in one mapping (the first would be lost)")
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    LimitedLoader.add_constructor("tag:yaml.org,2002:int", LimitedLoader.construct_yaml_int)
    return LimitedLoader


def _check_shape(doc: Any, where: str, max_depth: int, max_nodes: int) -> None:
    """Walk the parsed document without recursion, as consumers will (YAML aliases expanded).

    Rejects documents deeper than ``max_depth`` or with more than ``max_nodes`` values, so
    an alias bomb (anchors referencing anchors) is refused before any loader walks it.
    """
    count = 0
    stack = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        count += 1
        if count > max_nodes:
            raise InstanceError(where, f"holds more than {max_nodes} values (YAML aliases expanded)")
        if isinstance(value, dict):
            if depth > max_depth:
                raise InstanceError(where, f"nests lists or objects deeper than {max_depth} levels")
            for v in value.values():
                if isinstance(v, (dict, list)):
                    stack.append((v, depth + 1))
                else:
                    count += 1
            count += len(value)
        elif isinstance(value, list):
            if depth > max_depth:
                raise InstanceError(where, f"nests lists or objects deeper than {max_depth} levels")
            for v in value:
                if isinstance(v, (dict, list)):
                    stack.append((v, depth + 1))
                else:
                    count += 1
    if count > max_nodes:   # the scalars of the last list or object walked
        raise InstanceError(where, f"holds more than {max_nodes} values (YAML aliases expanded)")


def _name_max(folder: Path) -> int:
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        return 255


_TMP_RE = r"\.(?P<name>.*)\.(?P<pid>\d+)\.[A-Za-z0-9_]+\.tmp"


def _tmp_prefix(p: Path) -> str:
    # Keep the temporary name within NAME_MAX even for a target name near the limit.
    return f".{p.name[:80]}.{os.getpid()}."


def _clean_stale(p: Path) -> None:
    """Remove temporaries of ours for ``p`` whose writer process no longer runs."""
    head = f".{p.name[:80]}."
    try:
        entries = [e for e in os.scandir(p.parent) if e.name.startswith(head) and e.name.endswith(".tmp")]
    except OSError:
        return
    for e in entries:
        m = re.fullmatch(_TMP_RE, e.name)
        if m is None or m.group("name") != p.name[:80]:
            continue
        pid = int(m.group("pid"))
        if pid == os.getpid():
            continue
        try:
            os.kill(pid, 0)
            continue  # the writer still runs
        except ProcessLookupError:
            pass
        except (PermissionError, OverflowError):
            continue
        with contextlib.suppress(OSError):
            os.unlink(e.path)


def check_output_path(path: str | os.PathLike, option: str = "-o") -> None:
    """An output file must be writable; checked before any work by really writing in its folder.

    Creates and removes a temporary file of our own naming in the target folder,
    so a missing folder, a folder without write permission or a name too long
    is reported now, as one line, rather than after the work.
    """
    p = Path(path)
    if str(path) == "" or p.name in ("", ".", ".."):
        raise InstanceError(option, "must name a file")
    try:
        if not p.parent.is_dir():
            raise InstanceError(option, f"folder {str(p.parent)!r} does not exist (it is a file)" if p.parent.exists()
                                else f"folder {str(p.parent)!r} does not exist")
        if len(os.fsencode(p.name)) > _name_max(p.parent):
            raise InstanceError(option, f"file name is longer than {_name_max(p.parent)} bytes")
        if p.is_dir():
            raise InstanceError(option, f"{str(p)!r} is a folder; give a file name")
        if p.exists() and not os.access(p, os.W_OK):
            raise InstanceError(option, f"{str(p)!r} is not writable")
    except OSError as exc:
        raise InstanceError(option, f"cannot be used ({exc.strerror or exc.__class__.__name__})") from None
    try:
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=_tmp_prefix(p), suffix=".tmp")
    except OSError as exc:
        raise InstanceError(option, f"cannot write in folder {str(p.parent)!r} ({exc.strerror})") from None
    os.close(fd)
    os.unlink(tmp)


def check_output_folder(path: str | os.PathLike, option: str = "-o", files: tuple[str, ...] = ()) -> Path:
    """An output folder, checked before any work: its name fits the file system, it is a folder or
    can be created (its parent exists and takes a write, as :func:`check_output_path` checks),
    it is not a dangling link or a link loop, and none of the ``files`` it will receive is a
    folder. Returns the folder; one :class:`InstanceError` naming ``option`` otherwise."""
    if str(path) == "":
        raise InstanceError(option, "must name a folder")
    p = Path(path)
    if p.name in ("", ".", ".."):
        p = p.resolve()
    try:
        if len(os.fsencode(str(p))) > 4000:
            raise InstanceError(option, "path is longer than 4,000 bytes")
        if len(os.fsencode(p.name)) > _name_max(p.parent if p.parent.is_dir() else Path(".")):
            raise InstanceError(option, f"folder name is longer than {_name_max(p.parent)} bytes")
        if p.is_symlink() and not p.exists():
            raise InstanceError(option, f"{str(p)!r} is a link to nothing (or a loop of links)")
        if p.exists():
            if not p.is_dir():
                raise InstanceError(option, f"{str(p)!r} is a file; give a folder")
            for name in files:
                if (p / name).is_dir():
                    raise InstanceError(option, f"{str(p / name)!r} is a folder where an output file goes")
            probe = p
        else:
            if not p.parent.is_dir():
                raise InstanceError(option, f"folder {str(p.parent)!r} does not exist (it is a file)" if p.parent.exists()
                                    else f"folder {str(p.parent)!r} does not exist")
            probe = p.parent
        fd, tmp = tempfile.mkstemp(dir=probe, prefix=f".{p.name[:80]}.{os.getpid()}.", suffix=".tmp")
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise InstanceError(option, f"cannot be used ({exc.strerror or exc.__class__.__name__})") from None
    return p


_COMMIT = {"done": False}


def outputs_committed() -> bool:
    """Whether the running command has put all its outputs in place (:func:`commit`): from then
    on it has succeeded, and an interrupt only cuts what it would still print."""
    return _COMMIT["done"]


def reset_commit() -> None:
    """Forget an earlier command's commit (the command line calls this when a command starts)."""
    _COMMIT["done"] = False


@contextlib.contextmanager
def commit():
    """The block that puts a command's outputs in place, safe from an interrupt.

    ``SIGINT`` is held while the block runs (in the main thread; elsewhere there is no signal
    to hold), so the outputs land as one set; then the command counts as done
    (:func:`outputs_committed`) and an interrupt that arrived meanwhile is raised. An error
    inside the block propagates as it is, and the command is not done.
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        _COMMIT["done"] = True
        return
    pending: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: pending.append(signum))
    try:
        yield
        _COMMIT["done"] = True
    finally:
        signal.signal(signal.SIGINT, previous)
    if pending:
        raise KeyboardInterrupt


@contextlib.contextmanager
def staged_folder(out: Path):
    """Write a command's outputs into a temporary sibling of ``out``, moved into place at the end.

    On success every file moves into ``out`` (created if missing: the whole folder is renamed
    in one step; else entry by entry, each replace atomic, a sub-folder replacing the earlier
    one of that name as a whole), inside :func:`commit`: an interrupt during the moves waits
    for the last one, so ``out`` holds either the earlier state or the whole new set. On an
    error or an interrupt before the moves the temporary folder is removed and ``out`` is
    left as it was.
    """
    import shutil

    parent = out.parent if str(out.parent) else Path(".")
    tmp = Path(tempfile.mkdtemp(dir=parent, prefix=f".{out.name[:80]}.{os.getpid()}.", suffix=".tmp"))
    try:
        os.chmod(tmp, 0o777 & ~_umask())  # the folder a user gets, not mkdtemp's private one
        yield tmp
        with commit():
            _move_into(tmp, out)
    except BaseException:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
        raise


def _move_into(tmp: Path, out: Path) -> None:
    import shutil

    if not out.exists():
        os.rename(tmp, out)
        _fsync_dir(out.parent if str(out.parent) else Path("."))
        return
    for entry in sorted(os.listdir(tmp)):
        src, dst = tmp / entry, out / entry
        if src.is_dir() and dst.is_dir() and not dst.is_symlink():
            # a sub-folder (logs/, figures/) replaces the earlier run's as a whole
            old = out / f".{entry[:80]}.{os.getpid()}.old"
            os.rename(dst, old)
            os.rename(src, dst)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(src, dst)
    tmp.rmdir()
    _fsync_dir(out)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as exc:  # some file systems cannot fsync a folder
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(fd)


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically and durably, creating its folder.

    Temporary file in the same folder, ``fsync``, rename, ``fsync`` of the folder.
    An existing target keeps its mode; a new file gets ``0666`` less the umask.
    A failure is one :class:`InstanceError` naming the path; the old target is untouched.
    """
    p = Path(path)
    if p.is_dir():
        raise InstanceError(str(p), "is a folder; give a file name")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode = stat.S_IMODE(os.stat(p).st_mode)
        except FileNotFoundError:
            mode = 0o666 & ~_umask()
        _clean_stale(p)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=_tmp_prefix(p), suffix=".tmp")
    except OSError as exc:
        raise InstanceError(str(p), f"cannot be written ({exc.strerror or exc.__class__.__name__})") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, p)
        _fsync_dir(p.parent)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise InstanceError(str(p), f"cannot be written ({exc.strerror or exc.__class__.__name__})") from None
        raise


def write_text(path: str | os.PathLike, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def dumps_json(obj: Any, rows: str | tuple[str, ...] | None = None) -> str:
    """``obj`` as indented JSON; with ``rows`` (a key or keys of ``obj``), each top-level list
    ``obj[key]`` holds one item per line and each top-level object one entry per line (a trace's
    job rows and its ``table_regions``: a 7-day MAST week is 43 MB so, far more with every value on
    its own line, beyond the 64 MiB input limit). The text parses to the same document either way."""
    keys = (rows,) if isinstance(rows, str) else tuple(rows or ())
    if not isinstance(obj, dict):
        return json.dumps(obj, indent=2, sort_keys=False)
    keys = tuple(k for k in keys if isinstance(obj.get(k), list | dict) and obj[k])
    if not keys:
        return json.dumps(obj, indent=2, sort_keys=False)
    markers = {k: json.dumps(f"\u0000rows\u0000{i}\u0000") for i, k in enumerate(keys)}
    text = json.dumps({**obj, **{k: json.loads(m) for k, m in markers.items()}}, indent=2, sort_keys=False)
    if any(text.count(m) != 1 for m in markers.values()):   # a marker string is also a value of the document
        return json.dumps(obj, indent=2, sort_keys=False)
    for k, m in markers.items():
        v = obj[k]
        if isinstance(v, list):
            body = "[\n" + ",\n".join("    " + json.dumps(item, separators=(",", ":")) for item in v) + "\n  ]"
        else:
            body = "{\n" + ",\n".join(f"    {json.dumps(key)}: {json.dumps(item, separators=(',', ':'))}"
                                        for key, item in v.items()) + "\n  }"
        text = text.replace(m, body, 1)
    return text


def write_json(path: str | os.PathLike, obj: Any, rows: str | tuple[str, ...] | None = None) -> None:
    """Write ``obj`` as JSON (atomically, :func:`write_text`); ``rows``: see :func:`dumps_json`."""
    write_text(path, dumps_json(obj, rows) + "\n")
