# Type stubs of imghist.io (image files: RGB(A) NumPy arrays of uint8 or uint16, and their metadata).
import os
from dataclasses import dataclass
from typing import Any, List, Literal, Optional, Tuple, Union

from numpy.typing import NDArray

_Path = Union[str, "os.PathLike[str]"]

@dataclass
class Metadata:
    exif: bytes = b""
    icc: bytes = b""
    xmp: bytes = b""
    comments: List[str] = ...
    dpi: Optional[Tuple[float, float]] = None
    orientation: Optional[int] = None
    quality: Optional[int] = None
    progressive: bool = False
    format: Optional[str] = None

def read(path: _Path, *, auto_orient: bool = False, max_pixels: int = 268435456) -> Tuple[NDArray[Any], Metadata]: ...
def write(path: _Path, array: NDArray[Any], metadata: Optional[Union[Metadata, dict]] = None,
          quality: Optional[int] = None, *, png_level: int = 1,
          tiff_compression: Literal["deflate", "lzw", "packbits", "none"] = "deflate", threads: int = 0) -> None: ...
