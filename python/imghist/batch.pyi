# Type stubs of imghist.batch (the filters over batches: a list of images, or one (N, H, W[, C]) array; NumPy,
# CuPy, torch or any __cuda_array_interface__ / DLPack producer; results of the input's kind).
from typing import Any, List, Literal, Optional, Sequence, Tuple, TypeVar, Union

import numpy as np
from numpy.typing import NDArray

from . import CLAHE as _SingleCLAHE

_Batch = TypeVar("_Batch")
_Backend = Literal["auto", "cpu", "cuda"]

def equalizeHist(images: _Batch, dst: Optional[_Batch] = None, *, backend: _Backend = "auto") -> _Batch: ...
def equalizeHistColor(images: _Batch, mode: Literal["luma", "per-channel"] = "luma", dst: Optional[_Batch] = None, *,
                      backend: _Backend = "auto") -> _Batch: ...
def threshold(images: _Batch, thresh: float, maxval: float, type: int, dst: Optional[_Batch] = None, *,
              backend: _Backend = "auto") -> Tuple[Any, _Batch]: ...

class CLAHE(_SingleCLAHE):
    def apply(self, images: _Batch, dst: Optional[_Batch] = None) -> _Batch: ...  # type: ignore[override]

def createCLAHE(clipLimit: float = 40.0, tileGridSize: Tuple[int, int] = (8, 8), *,
                backend: _Backend = "auto") -> CLAHE: ...
def stretchContrast(images: _Batch, lowPercent: float = 2.0, highPercent: float = 1.0, dst: Optional[_Batch] = None,
                    *, mode: Literal["luma", "per-channel"] = "luma", backend: _Backend = "auto") -> _Batch: ...
def matchHistograms(images: _Batch, reference: Any, dst: Optional[_Batch] = None, *,
                    backend: _Backend = "auto") -> _Batch: ...
def thresholdMultiOtsu(images: _Batch, classes: int = 3, dst: Optional[_Batch] = None, *,
                       backend: _Backend = "auto") -> Tuple[NDArray[np.int64], _Batch]: ...
