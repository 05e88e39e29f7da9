"""Raster engine: lazy, chunked loading onto a common grid (``io``), analysis on arrays (``ops``),
grids and metric pixel areas (``grid``), provider-independent band names (``bands``), where graphs
run (``compute``: local threads or a Dask cluster) and the code sandbox (``sandbox``).

Headless: no Qt, no QGIS. The sandbox child imports this package too, so keep imports cheap."""

from .bands import BAND_ALIASES, asset_key_for, band_map, canonical_band  # noqa: F401
from .grid import Grid, cell_area_m2, crop, grid_of, pixel_area_m2, row_pixel_areas, snap_grid  # noqa: F401
from .io import (  # noqa: F401
    SCL_INVALID,
    Source,
    aoi_mask,
    grid_for_items,
    lazy_band,
    load_item_set,
    load_raster,
    raster_info,
    read_window,
    write_cog,
    write_raster,
)
from .ops import (  # noqa: F401
    DNBR_BREAKS,
    DNBR_LABELS,
    FLOOD_LABELS,
    INDEX_NAMES,
    INDICES,
    NODATA_CLASS,
    WATER_THRESHOLDS,
    burn_severity,
    change_mask,
    class_areas,
    classify,
    difference,
    dnbr,
    flood_classes,
    geometry_area_m2,
    index_change,
    normalized_difference,
    polygonize,
    scl_valid,
    spectral_index,
    threshold,
    zonal_stats,
    zonal_stats_by_class,
)
