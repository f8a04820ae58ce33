"""Summary protocol buffers for TensorBoard: scalars, histograms, images, text, hparams.

Each function turns values into the `Summary` message TensorBoard's plugins read, in the
layout PyTorch's writer uses, so that the two frameworks' logs look alike in TensorBoard.
"""

from __future__ import annotations

import io

import numpy as np
from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData


def to_numpy(x) -> np.ndarray:
    """A tensor (ember's, or anything with `.detach().cpu().numpy()`), array or number."""
    if hasattr(x, "detach") and hasattr(x, "numpy"):
        x = x.detach().cpu().numpy()
    x = np.asarray(x)
    if x.dtype.kind == "V" or x.dtype.name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        x = x.astype(np.float32)  # ml_dtypes' 16- and 8-bit floats, as float32
    return x


# --- scalars ---------------------------------------------------------------------------------

def scalar(tag: str, value, new_style: bool = False, double_precision: bool = False) -> Summary:
    """One number: as `simple_value`, or (new_style) as a tensor the scalars plugin reads."""
    arr = to_numpy(value).squeeze()
    if arr.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given "
                             f"size: {arr.size} and {arr.ndim} dimensions.")
    number = float(arr)
    if not new_style:
        return Summary(value=[Summary.Value(tag=tag, simple_value=number)])
    tensor = (TensorProto(double_val=[number], dtype="DT_DOUBLE") if double_precision
              else TensorProto(float_val=[number], dtype="DT_FLOAT"))
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=tag, tensor=tensor, metadata=meta)])


# --- histograms ------------------------------------------------------------------------------

def default_bins() -> list[float]:
    """TensorFlow's bucket edges: +-1e-12 growing by 10% to +-1e20, and 0."""
    edges = []
    v = 1e-12
    while v < 1e20:
        edges.append(v)
        v *= 1.1
    return [-e for e in reversed(edges)] + [0] + edges


def histogram(tag: str, values, bins, max_bins: int | None = None) -> Summary:
    """A histogram of `values` over `bins` (edges, a count, or a NumPy rule such as 'auto')."""
    return Summary(value=[Summary.Value(tag=tag, histo=histogram_proto(values, bins, max_bins))])


def histogram_proto(values, bins, max_bins: int | None = None) -> HistogramProto:
    values = to_numpy(values).astype(float).reshape(-1)
    if values.size == 0:
        raise ValueError("The input has no element.")
    counts, edges = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:  # merge runs of neighbouring bins
        k = len(counts) // max_bins
        counts = np.pad(counts, (0, -len(counts) % k)).reshape(-1, k).sum(axis=1)
        edges = np.append(edges[:-1:k], edges[-1])
    filled = np.flatnonzero(counts)
    if filled.size == 0:
        raise ValueError("The histogram is empty: no value falls inside the bins.")
    first, last = filled[0], filled[-1]
    # TensorBoard reads each bucket's right edge only: keep one empty bucket on the left
    # so that the left edge of the first filled one is drawn too.
    if first > 0:
        counts, limits = counts[first - 1:last + 1], edges[first:last + 2]
    else:
        counts, limits = np.concatenate([[0], counts[:last + 1]]), edges[:last + 2]
    return HistogramProto(min=values.min(), max=values.max(), num=len(values),
                          sum=values.sum(), sum_squares=values.dot(values),
                          bucket_limit=limits.tolist(), bucket=counts.tolist())


def histogram_raw(tag: str, min, max, num, sum, sum_squares, bucket_limits,
                  bucket_counts) -> Summary:
    hist = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                          bucket_limit=bucket_limits, bucket=bucket_counts)
    return Summary(value=[Summary.Value(tag=tag, histo=hist)])


# --- images ----------------------------------------------------------------------------------

def to_hwc(array: np.ndarray, dataformats: str) -> np.ndarray:
    """An image array in `dataformats` (CHW, HWC, HW, or NCHW for a grid) as height x
    width x channels, grey images repeated into three channels."""
    fmt = dataformats.upper()
    if len(set(fmt)) != len(fmt):
        raise AssertionError(f"You can not use the same dimension shorthand twice. "
                             f"input_format: {dataformats}")
    if array.ndim != len(fmt):
        raise AssertionError(f"size of input tensor and input format are different. tensor "
                             f"shape: {array.shape}, input_format: {dataformats}")
    if len(fmt) == 4:
        return image_grid(array.transpose([fmt.index(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(fmt) == 3:
        hwc = array.transpose([fmt.index(c) for c in "HWC"])
        return np.repeat(hwc, 3, axis=2) if hwc.shape[2] == 1 else hwc
    hw = array.transpose([fmt.index(c) for c in "HW"])
    return np.stack([hw, hw, hw], axis=2)


def image_grid(images: np.ndarray, ncols: int = 8) -> np.ndarray:
    """N images (N x C x H x W, C of 1 or 3) tiled into one 3 x rows*H x cols*W image."""
    if images.shape[1] == 1:
        images = np.repeat(images, 3, axis=1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    n, _, h, w = images.shape
    cols = min(n, ncols)
    rows = -(-n // cols)
    canvas = np.zeros((3, h * rows, w * cols), dtype=images.dtype)
    for i in range(n):
        r, c = divmod(i, cols)
        canvas[:, r * h:(r + 1) * h, c * w:(c + 1) * w] = images[i]
    return canvas


def image(tag: str, img, dataformats: str = "CHW") -> Summary:
    """An image as PNG: uint8 values taken as 0..255, anything else as 0..1 (clipped)."""
    from PIL import Image  # (pillow comes with tensorboard)

    array = to_hwc(to_numpy(img), dataformats)
    scale = 1 if array.dtype == np.uint8 else 255
    pixels = (array.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    height, width, channels = pixels.shape
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG")
    proto = Summary.Image(height=height, width=width, colorspace=channels,
                          encoded_image_string=out.getvalue())
    return Summary(value=[Summary.Value(tag=tag, image=proto)])


# --- text ------------------------------------------------------------------------------------

def text(tag: str, text_string: str) -> Summary:
    """Markdown text, as the text plugin stores it: a string tensor under `tag/text_summary`."""
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
    tensor = TensorProto(dtype="DT_STRING", string_val=[text_string.encode("utf-8")],
                         tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=meta,
                                        tensor=tensor)])


# --- hyperparameters -------------------------------------------------------------------------

def hparams(hparam_dict: dict, metric_dict: dict, hparam_domain_discrete: dict | None = None):
    """The hparams plugin's three summaries: the experiment (names of hparams and metrics),
    the session's start (the values) and its end (success)."""
    from tensorboard.plugins.hparams import api_pb2, metadata, plugin_data_pb2

    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    domains = hparam_domain_discrete or {}
    if not isinstance(domains, dict):
        raise TypeError(
            "parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in domains.items():
        if k not in hparam_dict or not isinstance(v, list) \
                or not all(isinstance(d, type(hparam_dict[k])) for d in v):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same "
                            f"type as hparam_dict[{k}].")

    start = plugin_data_pb2.SessionStartInfo()
    infos = []
    for k, v in hparam_dict.items():
        if v is None:
            continue
        # NOTE: a bool is an int here, so it is logged as a number (1.0 / 0.0), as PyTorch's
        # writer logs it.
        if isinstance(v, (int, float)):
            start.hparams[k].number_value = v
            field, kind = "number_value", "DATA_TYPE_FLOAT64"
        elif isinstance(v, str):
            start.hparams[k].string_value = v
            field, kind = "string_value", "DATA_TYPE_STRING"
        elif hasattr(v, "detach"):  # a tensor: its first element, as a number
            start.hparams[k].number_value = to_numpy(v).reshape(-1)[0]
            infos.append(api_pb2.HParamInfo(name=k, type=api_pb2.DataType.Value(
                "DATA_TYPE_FLOAT64")))
            continue
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        domain = None
        if k in domains:
            domain = struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d})
                                                  for d in domains[k]])
        infos.append(api_pb2.HParamInfo(name=k, type=api_pb2.DataType.Value(kind),
                                        domain_discrete=domain))

    def wrap(tag, **content):
        data = plugin_data_pb2.HParamsPluginData(version=metadata.PLUGIN_DATA_VERSION, **content)
        meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
            plugin_name=metadata.PLUGIN_NAME, content=data.SerializeToString()))
        return Summary(value=[Summary.Value(tag=tag, metadata=meta)])

    experiment = api_pb2.Experiment(
        hparam_infos=infos,
        metric_infos=[api_pb2.MetricInfo(name=api_pb2.MetricName(tag=k)) for k in metric_dict])
    end = plugin_data_pb2.SessionEndInfo(status=api_pb2.Status.Value("STATUS_SUCCESS"))
    return (wrap(metadata.EXPERIMENT_TAG, experiment=experiment),
            wrap(metadata.SESSION_START_INFO_TAG, session_start_info=start),
            wrap(metadata.SESSION_END_INFO_TAG, session_end_info=end))
