"""Image files for the media tests, made in memory with Pillow (and by hand, for headers)."""

import io
import struct
import zlib

from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import ExifTags, Image

GPS = ExifTags.IFD.GPSInfo


def image_bytes(fmt: str = "JPEG", size=(64, 48), color=(200, 30, 30), **save) -> bytes:
    mode = "RGBA" if fmt in ("PNG", "WEBP") else "RGB"
    image = Image.new(mode, size, (*color, 255)[: len(mode)])
    out = io.BytesIO()
    image.save(out, fmt, **save)
    return out.getvalue()


def upload(name: str, data: bytes, content_type: str = "image/jpeg") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type)


def jpeg_with_gps(size=(64, 48), orientation: int = 1) -> bytes:
    """A JPEG whose EXIF holds a camera, a GPS position, an orientation; plus XMP and a comment."""
    exif = Image.Exif()
    exif[ExifTags.Base.Make] = "PhoneCam"
    exif[ExifTags.Base.Orientation] = orientation
    exif.get_ifd(GPS).update(
        {
            ExifTags.GPS.GPSLatitudeRef: "N",
            ExifTags.GPS.GPSLatitude: (48.0, 51.0, 29.0),
            ExifTags.GPS.GPSLongitudeRef: "E",
            ExifTags.GPS.GPSLongitude: (2.0, 17.0, 40.0),
        }
    )
    xmp = (
        b'<x:xmpmeta xmlns:x="adobe:ns:meta/">'
        b"<exif:GPSLatitude>48,51N</exif:GPSLatitude></x:xmpmeta>"
    )
    data = image_bytes("JPEG", size, exif=exif, xmp=xmp, comment=b"shot at home")
    assert Image.open(io.BytesIO(data)).getexif().get_ifd(GPS), "the test image must carry GPS"
    return data


def animated_gif(frames: int = 3, size=(32, 32)) -> bytes:
    images = [Image.new("RGB", size, (n * 60 % 256, 100, 200)) for n in range(frames)]
    out = io.BytesIO()
    images[0].save(out, "GIF", save_all=True, append_images=images[1:], duration=100, loop=0)
    return out.getvalue()


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png_header_only(width: int, height: int) -> bytes:
    """A PNG declaring ``width`` x ``height`` that holds a few bytes: a decompression bomb."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(b"\x00" * 1024))
        + _chunk(b"IEND", b"")
    )


def noise_png(megabytes: float) -> bytes:
    """A PNG of random pixels (incompressible) of about this many megabytes."""
    import os

    side = int((megabytes * 1024 * 1024 / 3) ** 0.5) + 1
    image = Image.frombytes("RGB", (side, side), os.urandom(side * side * 3))
    out = io.BytesIO()
    image.save(out, "PNG", compress_level=0)
    return out.getvalue()
