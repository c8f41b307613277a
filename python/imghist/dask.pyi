# Type stubs of imghist.dask (dask arrays with NumPy or CuPy blocks).
import os
from typing import Any, List, Literal, NamedTuple, Optional, Sequence, Tuple, Union

import dask.array as da
import numpy as np
from numpy.typing import NDArray

_RangeSpec = Union[str, type, Tuple[float, float]]

def histogram(darr: Any, bins: int = 256, range: Optional[Sequence[float]] = None, *,
              split_every: Optional[int] = None) -> Tuple[da.Array, NDArray[np.float64]]: ...
def equalize_hist(darr: Any, nbins: int = 256, mask: Any = None) -> da.Array: ...
def rescale_intensity(darr: Any, in_range: _RangeSpec = "image", out_range: _RangeSpec = "dtype") -> da.Array: ...
def match_histograms(darr: Any, reference: Any, *, channel_axis: Optional[int] = None) -> da.Array: ...

_Path = Union[str, "os.PathLike[str]"]

class FileResult(NamedTuple):
    file: str
    output: str
    status: Literal["done", "failed", "skipped"]
    error: Optional[str]
    note: Optional[str]

def process_files(operation: Literal["equalize", "stretch", "match", "threshold", "clahe"],
                  inputs: Union[_Path, Sequence[_Path]], output_dir: _Path, client: Any = None,
                  **options: Any) -> List[FileResult]: ...
