# Type stubs of imghist.dask (dask arrays with NumPy or CuPy blocks).
from typing import Any, Optional, Sequence, Tuple, Union

import dask.array as da
import numpy as np
from numpy.typing import NDArray

_RangeSpec = Union[str, type, Tuple[float, float]]

def histogram(darr: Any, bins: int = 256, range: Optional[Sequence[float]] = None, *,
              split_every: Optional[int] = None) -> Tuple[da.Array, NDArray[np.float64]]: ...
def equalize_hist(darr: Any, nbins: int = 256, mask: Any = None) -> da.Array: ...
def rescale_intensity(darr: Any, in_range: _RangeSpec = "image", out_range: _RangeSpec = "dtype") -> da.Array: ...
def match_histograms(darr: Any, reference: Any, *, channel_axis: Optional[int] = None) -> da.Array: ...
