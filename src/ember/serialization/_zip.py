"""The ZIP container of `.pt` files, written byte for byte as PyTorch's miniz writes it.

A plain `torch.load` accepts any stored ZIP, but `torch.load(mmap=True)` wants every
record's payload aligned, and torch's opt-in offset prediction
(`calculate_storage_offsets`) assumes miniz's exact layout:

- each local header carries an extra field "FB" padded with 'Z' so the payload
  starts on a multiple of 64 bytes (a zip64 field comes first for huge records);
- local headers set flag bit 3 and leave CRC and sizes zero; a data descriptor
  (16 bytes, 24 for zip64 sizes) follows every non-empty payload, none after an
  empty one;
- the archive ends with a zip64 end record, its locator, then the classic end record.

Reading goes through Python's `zipfile`, plus `payload_offset` for memory-mapping.
"""

from __future__ import annotations

import struct
import zlib

ALIGN = 64
_U32 = 0xFFFFFFFF
_LOCAL = struct.Struct("<4sHHHHHIIIHH")
_CENTRAL = struct.Struct("<4sHHHHHHIIIHHHHHII")


class ZipWriter:
    """Append stored records to a binary stream in miniz's layout; `close()` finishes."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.cursor = 0
        self.entries: list[tuple[bytes, int, int, int, bool]] = []

    def _write(self, b) -> None:
        self.stream.write(b)
        self.cursor += len(b)

    def add(self, name: str, payload) -> None:
        """Write one record; `payload` is bytes or any buffer (written without copying)."""
        data = memoryview(payload).cast("B")
        size = data.nbytes
        raw = name.encode("utf-8")
        offset = self.cursor
        huge = size >= _U32 or offset >= _U32
        z64 = b""
        if huge:
            fields = (struct.pack("<QQ", size, size) if size >= _U32 else b"") + \
                (struct.pack("<Q", offset) if offset >= _U32 else b"")
            z64 = struct.pack("<HH", 1, len(fields)) + fields
        start = offset + _LOCAL.size + len(raw) + len(z64) + 4
        pad = -start % ALIGN
        extra = z64 + b"FB" + struct.pack("<H", pad) + b"Z" * pad
        flags = 0x0808 if size else 0x0800
        self._write(_LOCAL.pack(b"PK\x03\x04", 0, flags, 0, 0, 0, 0, 0, 0, len(raw),
                                len(extra)))
        self._write(raw)
        self._write(extra)
        crc = zlib.crc32(data) & _U32
        if size:
            self._write(data)
            if huge:
                self._write(struct.pack("<4sIQQ", b"PK\x07\x08", crc, size, size))
            else:
                self._write(struct.pack("<4sIII", b"PK\x07\x08", crc, size, size))
        self.entries.append((raw, offset, size, crc, bool(size)))

    def close(self) -> None:
        cd_start = self.cursor
        for raw, offset, size, crc, has_desc in self.entries:
            fields = b""
            if size >= _U32:
                fields += struct.pack("<QQ", size, size)
            if offset >= _U32:
                fields += struct.pack("<Q", offset)
            extra = struct.pack("<HH", 1, len(fields)) + fields if fields else b""
            self._write(_CENTRAL.pack(
                b"PK\x01\x02", 0, 0, 0x0808 if has_desc else 0x0800, 0, 0, 0, crc,
                min(size, _U32), min(size, _U32), len(raw), len(extra), 0, 0, 0, 0,
                min(offset, _U32)))
            self._write(raw)
            self._write(extra)
        cd_size = self.cursor - cd_start
        n = len(self.entries)
        z64_at = self.cursor
        self._write(struct.pack("<4sQHHIIQQQQ", b"PK\x06\x06", 44, 0x031E, 0x002D, 0, 0, n, n,
                                cd_size, cd_start))
        self._write(struct.pack("<4sIQI", b"PK\x06\x07", 0, z64_at, 1))
        self._write(struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, min(n, 0xFFFF),
                                min(n, 0xFFFF), min(cd_size, _U32), min(cd_start, _U32), 0))


def payload_offset(buf, header_offset: int, total: int) -> int:
    """Where a record's bytes start, read from its local header (bounds-checked)."""
    if header_offset < 0 or header_offset + _LOCAL.size > total:
        raise ValueError("a ZIP local header lies outside the file")
    head = _LOCAL.unpack(bytes(buf[header_offset:header_offset + _LOCAL.size]))
    if head[0] != b"PK\x03\x04":
        raise ValueError("a ZIP local header has a bad signature")
    return header_offset + _LOCAL.size + head[9] + head[10]
