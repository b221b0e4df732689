"""``placement export INSTANCE -o FILE.mps|FILE.lp``: an instance's exact model as a model file.

The writing is :mod:`placement.models.export` (the modelling layer's own writers); this command
loads the instance, checks the output path, and prints one line per written file. A CASSINI
instance writes one file per candidate (``FILE.<candidate>.mps``) unless ``--option
candidate=NAME`` picks one; ``--model link`` writes Table 1 per candidate and shared link.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from ..errors import InstanceError
from ..io import check_output_path, commit, write_json
from .commands import load_instance_file
from .options import key_value

__all__ = ["add_parser", "cmd_export"]


def add_parser(sub) -> None:
    from placement.models.export import MODELS

    models = "; ".join(f"{fam}: {', '.join(ms)}" for fam, ms in MODELS.items())
    p = sub.add_parser("export", help="write an instance's exact model as MPS or LP",
                       epilog=f"models by family (first = default): {models}")
    p.add_argument("instance")
    p.add_argument("-o", "--output", required=True, help="FILE.mps or FILE.lp")
    p.add_argument("--model", default=None, help="which model (default: the family's first, listed below)")
    p.add_argument("--option", action="append", type=key_value, metavar="KEY=VALUE",
                   help="a writer keyword, e.g. time_limit=30 (Tetris exact), candidate=c0 (CASSINI), "
                        "objective=mean_jct (schedule bound) (repeatable)")
    p.add_argument("--manifest", default=None, help="also write the file records as JSON here")
    p.set_defaults(func=cmd_export)


def write_staged(family: str, instance, out: Path, model: str | None, options: dict,
                 also=None) -> list[dict]:
    """Write ``instance``'s model ``model`` to ``out`` (one file, or one per CASSINI candidate) in a
    staging folder beside it, then move every file in as one set (``also(records)`` runs inside
    the same commit): an interrupt or a bad option leaves nothing half-written."""
    from placement.models.export import write

    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".export-", dir=out.parent) as tmp:
        try:
            records = write(family, instance, Path(tmp) / out.name, model, **options)
        except TypeError as exc:
            raise InstanceError("--option", f"is not a keyword of this model's writer ({exc})") from None
        with commit():
            for rec in records:
                staged = Path(rec["path"])
                final = out.parent / staged.name
                staged.replace(final)
                rec["path"] = str(final)
            if also is not None:
                also(records)
    return records


def cmd_export(args: argparse.Namespace) -> int:
    out = Path(args.output)
    if out.suffix.lower() not in (".mps", ".lp"):
        raise InstanceError("-o", f"must end in .mps or .lp, got {out.name!r}")
    check_output_path(args.output)
    if args.manifest:
        check_output_path(args.manifest)
    spec, instance = load_instance_file(args.instance)
    options = dict(args.option or [])
    manifest = (lambda records: write_json(args.manifest, {"instance": args.instance, "files": records})) \
        if args.manifest else None
    records = write_staged(spec.name, instance, out, args.model, options, manifest)
    for rec in records:
        extra = rec.get("in_memory")
        note = "" if not extra else f"  (in memory: {extra['status']}, objective {extra['objective']})"
        print(f"wrote {rec['path']}  {rec['model']}: {rec['columns']} columns, {rec['rows']} rows, "
              f"{rec['integers']} integer, {rec['sense']}{note}")
    return 0
