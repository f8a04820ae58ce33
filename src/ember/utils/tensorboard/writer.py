"""`SummaryWriter`: PyTorch's TensorBoard writer, writing event files through `tensorboard`.

Events go to `events.out.tfevents.*` files in `log_dir` through the tensorboard package's
own `EventFileWriter` (queued, flushed every `flush_secs` or `max_queue` events), as
PyTorch's writer does; `tensorboard --logdir runs` then shows them.
"""

from __future__ import annotations

import os
import socket
import time
from datetime import datetime

from tensorboard.compat.proto import event_pb2
from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from . import summaries
from .graph import graph


class FileWriter:
    """Writes Event protocol buffers to one event file in `log_dir`."""

    def __init__(self, log_dir, max_queue: int = 10, flush_secs: int = 120,
                 filename_suffix: str = "") -> None:
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs,
                                            filename_suffix)

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None) -> None:
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None) -> None:
        self.add_event(event_pb2.Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile, walltime=None) -> None:
        """A (GraphDef, RunMetadata) pair: the graph, then its step stats as `step1`."""
        graph_def, stats = graph_profile
        self.add_event(event_pb2.Event(graph_def=graph_def.SerializeToString()), None, walltime)
        meta = event_pb2.TaggedRunMetadata(tag="step1", run_metadata=stats.SerializeToString())
        self.add_event(event_pb2.Event(tagged_run_metadata=meta), None, walltime)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()

    def reopen(self) -> None:
        self.event_writer.reopen()


class SummaryWriter:
    """Log scalars, histograms, images, text, hyperparameters and a model's graph for
    TensorBoard, with PyTorch's `torch.utils.tensorboard.SummaryWriter` API."""

    def __init__(self, log_dir=None, comment: str = "", purge_step=None, max_queue: int = 10,
                 flush_secs: int = 120, filename_suffix: str = "") -> None:
        """`log_dir` defaults to `runs/<Mon DD_HH-MM-SS>_<host><comment>`. `purge_step`:
        after a crash at step T+X, resuming at T hides the events logged from T on."""
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        self.default_bins = summaries.default_bins()

    def _get_file_writer(self) -> FileWriter:
        """The writer of `log_dir`'s own event file (made again after `close`)."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                step = self.purge_step
                self.file_writer.add_event(Event(step=step, file_version="brain.Event:2"))
                self.file_writer.add_event(
                    Event(step=step, session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        return self.log_dir

    def add_scalar(self, tag: str, scalar_value, global_step=None, walltime=None,
                   new_style: bool = False, double_precision: bool = False) -> None:
        """One number under `tag` at `global_step`."""
        self._get_file_writer().add_summary(
            summaries.scalar(tag, scalar_value, new_style=new_style,
                             double_precision=double_precision), global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step=None,
                    walltime=None) -> None:
        """Several numbers drawn on one chart: each goes to its own run,
        `log_dir/<main_tag>_<tag>`, under the tag `main_tag`."""
        walltime = time.time() if walltime is None else walltime
        root = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            run = root + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(run)
            if fw is None:
                fw = self.all_writers[run] = FileWriter(run, self.max_queue, self.flush_secs,
                                                        self.filename_suffix)
            fw.add_summary(summaries.scalar(main_tag, value), global_step, walltime)

    def add_histogram(self, tag: str, values, global_step=None, bins="tensorflow",
                      walltime=None, max_bins=None) -> None:
        """A histogram of `values`; `bins` is "tensorflow" (TensorFlow's exponential
        buckets), or anything `numpy.histogram` takes ("auto", a count, edges)."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(
            summaries.histogram(tag, values, bins, max_bins=max_bins), global_step, walltime)

    def add_histogram_raw(self, tag: str, min, max, num, sum, sum_squares, bucket_limits,
                          bucket_counts, global_step=None, walltime=None) -> None:
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        self._get_file_writer().add_summary(
            summaries.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits,
                                    bucket_counts), global_step, walltime)

    def add_image(self, tag: str, img_tensor, global_step=None, walltime=None,
                  dataformats: str = "CHW") -> None:
        """An image: floats in [0, 1] or uint8 in [0, 255], laid out as `dataformats`."""
        self._get_file_writer().add_summary(
            summaries.image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_images(self, tag: str, img_tensor, global_step=None, walltime=None,
                   dataformats: str = "NCHW") -> None:
        """A batch of images, tiled into one grid."""
        self.add_image(tag, img_tensor, global_step, walltime, dataformats=dataformats)

    def add_text(self, tag: str, text_string: str, global_step=None, walltime=None) -> None:
        """Text (markdown) under `tag`."""
        self._get_file_writer().add_summary(summaries.text(tag, text_string), global_step,
                                            walltime)

    def add_hparams(self, hparam_dict: dict, metric_dict: dict, hparam_domain_discrete=None,
                    run_name: str | None = None, global_step=None) -> None:
        """One run's hyperparameters and final metrics, for the HPARAMS tab: written to
        `log_dir/<run_name>` (default: the time), each metric also as a scalar there."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        exp, start, end = summaries.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        run = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=run) as w:
            for s in (exp, start, end):
                w.file_writer.add_summary(s, global_step)
            for k, v in metric_dict.items():
                w.add_scalar(k, v, global_step)

    def add_graph(self, model, input_to_model=None, verbose: bool = False,
                  use_strict_trace: bool = True) -> None:
        """The graph of `model(*input_to_model)`, for TensorBoard's GRAPHS tab.

        Read off the autograd graph of one forward in eval mode (see
        `ember.utils.tensorboard.graph`), not a TorchScript trace; `use_strict_trace` is
        accepted for PyTorch's signature and has no effect.
        """
        self._get_file_writer().add_graph(graph(model, input_to_model, verbose))

    def flush(self) -> None:
        """Write everything pending to disk."""
        for w in (self.all_writers or {}).values():
            w.flush()

    def close(self) -> None:
        """Flush and close every event file (a later add_* opens a new one)."""
        for w in (self.all_writers or {}).values():
            w.flush()
            w.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
