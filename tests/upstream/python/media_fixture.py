"""Writes the media fixture upstream's test_multimodal.py reads, which its sdist leaves out.

Upstream's repository keeps `examples/media/fixture.png` (an 8x8 RGB PNG, quadrants red, green,
blue and white) and `fixture.png.base64` (its base64). We draw the same picture and encode it
the way zlib does at level 9, so the sizes the tests pin (82 bytes) hold.
    media_fixture.py DIR    writes DIR/fixture.png and DIR/fixture.png.base64
"""
import base64
import os
import struct
import sys
import zlib

RED, GREEN, BLUE, WHITE = b"\xff\x00\x00", b"\x00\xaa\x00", b"\x00\x00\xff", b"\xff\xff\xff"


def chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def png() -> bytes:
    rows = b""
    for y in range(8):
        left, right = (RED, GREEN) if y < 4 else (BLUE, WHITE)
        rows += b"\x00" + left * 4 + right * 4  # filter type 0 per row
    header = struct.pack(">IIBBBBB", 8, 8, 8, 2, 0, 0, 0)  # 8-bit RGB
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    data = png()
    with open(os.path.join(out, "fixture.png"), "wb") as f:
        f.write(data)
    with open(os.path.join(out, "fixture.png.base64"), "w") as f:
        f.write(base64.b64encode(data).decode() + "\n")
