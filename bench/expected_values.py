"""bench/expected.json: the expected values of the offline tasks (``ground_truth.py``), of the paraphrase
suite's constraint variants (``ground_truth_variants.py``) and of the held-out splits (``ground_truth_heldout.py``,
``ground_truth_heldout2.py``, ``ground_truth_heldout3.py``, ``ground_truth_heldout4.py``,
``ground_truth_heldout5.py``, ``ground_truth_heldout6.py``, ``ground_truth_heldout7.py``,
``ground_truth_heldout8.py``, ``ground_truth_heldout9.py``, ``ground_truth_heldout10.py``,
``ground_truth_heldout11.py``, ``ground_truth_heldout12.py``, ``ground_truth_heldout13.py``,
``ground_truth_heldout14.py``) and of the raster split (``ground_truth_raster.py``), computed from the sample data and
written in one file.
Derived data: ``python -m bench ground-truth`` regenerates it (the runner and the tests do when it is missing)."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from .ground_truth import OUT_FILE, Data, data_dir, fingerprint, fires_la, hurst, lahaina, valencia
from .ground_truth_heldout import heldout
from .ground_truth_heldout2 import heldout2
from .ground_truth_heldout3 import heldout3
from .ground_truth_heldout4 import heldout4
from .ground_truth_heldout5 import heldout5
from .ground_truth_heldout6 import heldout6
from .ground_truth_heldout7 import heldout7
from .ground_truth_heldout8 import heldout8
from .ground_truth_heldout9 import heldout9
from .ground_truth_heldout10 import heldout10
from .ground_truth_heldout11 import heldout11
from .ground_truth_heldout12 import heldout12
from .ground_truth_heldout13 import heldout13
from .ground_truth_heldout14 import heldout14
from .ground_truth_raster import raster
from .ground_truth_variants import variants


def compute(root: Path | None = None) -> dict:
    d = Data(root or data_dir())
    result: dict = {
        "_about": "Expected values of the offline GeoFaham-Bench tasks, computed by "
        "bench/ground_truth.py from the sample data (GeoPandas/rasterio, metric CRSs). "
        "Derived data: regenerate, do not edit.",
        "_data": fingerprint(d),
    }
    for part in (fires_la, lahaina, valencia, hurst, variants):
        result.update(part(d))
    result.update(heldout(d.root))  # the held-out split's values (bench/heldout.json), under "heldout"
    result.update(heldout2(d.root))  # the second held-out split's values (bench/heldout2.json), under "heldout2"
    result.update(heldout3(d.root))  # the third held-out split's values (bench/heldout3.json), under "heldout3"
    result.update(heldout4(d.root))  # the fourth held-out split's values (bench/heldout4.json), under "heldout4"
    result.update(heldout5(d.root))  # the fifth held-out split's values (bench/heldout5.json), under "heldout5"
    result.update(heldout6(d.root))  # the sixth held-out split's values (bench/heldout6.json), under "heldout6"
    result.update(heldout7(d.root))  # the seventh held-out split's values (bench/heldout7.json), under "heldout7"
    result.update(heldout8(d.root))  # the eighth held-out split's values (bench/heldout8.json), under "heldout8"
    result.update(heldout9(d.root))  # the ninth held-out split's values (bench/heldout9.json), under "heldout9"
    result.update(heldout10(d.root))  # the tenth held-out split's values (bench/heldout10.json), under "heldout10"
    result.update(heldout11(d.root))  # the eleventh held-out split's values (bench/heldout11.json), under "heldout11"
    result.update(heldout12(d.root))  # the twelfth held-out split's values (bench/heldout12.json), under "heldout12"
    result.update(heldout13(d.root))  # the thirteenth held-out split's values (bench/heldout13.json), under "heldout13"
    result.update(heldout14(d.root))  # the fourteenth held-out split's values (bench/heldout14.json), under "heldout14"
    result.update(raster(d.root))  # the raster split's values (bench/raster.json), under "raster"
    return result


def write_expected(path: Path = OUT_FILE, root: Path | None = None) -> dict:
    result = compute(root)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=1, ensure_ascii=False, sort_keys=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.expected_values", description="Regenerate bench/expected.json from the sample data."
    )
    parser.add_argument("--out", default=str(OUT_FILE))
    parser.add_argument("--data", help="sample data folder (default: GEOFAHAM_DATA_DIR or ../shared/data)")
    args = parser.parse_args(argv)
    result = write_expected(Path(args.out), Path(args.data) if args.data else None)
    print(f"wrote {args.out}: " + ", ".join(k for k in result if not k.startswith("_")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
