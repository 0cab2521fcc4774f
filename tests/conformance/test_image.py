"""Conformance of the image ops (decoding, encoding, resizing) with TensorFlow on fresh random images.

PNG files are written both by TensorFlow (tf.io.encode_png) and by a small writer below that also produces
palettes, transparency chunks, low bit depths and Adam7 interlacing, so every libpng transformation path
is exercised; JPEG files by tf.io.encode_jpeg with random settings. Decoded pixels must be identical (both
libraries run libpng / libjpeg-turbo with the same settings); resized images agree within float32
tolerance for random sizes up and down, with both half_pixel_centers settings and align_corners."""
import struct
import zlib

import numpy as np
import pytest
import tensorflow as tf

import tfc
from conftest import assert_both_raise, assert_close, assert_grad_matches, assert_op_matches, random_array, require_ops

RESIZE_DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "int64", "bfloat16", "float16", "float32", "float64"]


# ---- a minimal PNG writer (every color type, bit depth, tRNS, Adam7) -------------------------------------

def _chunk(tag, data):
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)


def _pack_row(row, bits):
    """row: 1-D array of samples -> bytes at `bits` bits per sample (big-endian, MSB first)."""
    if bits == 16:
        return row.astype(">u2").tobytes()
    if bits == 8:
        return row.astype(np.uint8).tobytes()
    per = 8 // bits
    out = bytearray((len(row) + per - 1) // per)
    for i, v in enumerate(row):
        out[i // per] |= int(v) << (8 - bits * (i % per + 1))
    return bytes(out)


_ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def write_png(samples, color_type, bits, palette=None, trns=None, interlace=False):
    """samples: [h, w, channels-of-the-color-type] (palette indices for color type 3)."""
    h, w = samples.shape[:2]
    raw = bytearray()

    def rows(img):
        for y in range(img.shape[0]):
            raw.append(0)  # filter type None
            raw.extend(_pack_row(img[y].reshape(-1), bits))

    if interlace:
        for x0, y0, dx, dy in _ADAM7:
            sub = samples[y0::dy, x0::dx]
            if sub.shape[0] and sub.shape[1]:
                rows(sub)
    else:
        rows(samples)
    out = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, bits, color_type, 0, 0, int(interlace)))
    if palette is not None:
        out += _chunk(b"PLTE", palette.astype(np.uint8).tobytes())
    if trns is not None:
        out += _chunk(b"tRNS", trns)
    return out + _chunk(b"IDAT", zlib.compress(bytes(raw))) + _chunk(b"IEND", b"")


def random_png(rng):
    """A random PNG of any color type, bit depth and interlacing."""
    h, w = int(rng.integers(1, 24)), int(rng.integers(1, 24))
    color_type = int(rng.choice([0, 2, 3, 4, 6]))
    bits = int(rng.choice({0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16]}[color_type]))
    interlace = bool(rng.random() < 0.3)
    chans = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[color_type]
    top = (1 << bits) - 1
    palette = trns = None
    if color_type == 3:
        n = int(rng.integers(1, min(top + 1, 256) + 1))
        palette = rng.integers(0, 256, size=(n, 3))
        samples = rng.integers(0, n, size=(h, w, 1))
        if rng.random() < 0.5:
            trns = bytes(rng.integers(0, 256, size=int(rng.integers(1, n + 1))).astype(np.uint8))
    else:
        samples = rng.integers(0, top + 1, size=(h, w, chans))
        if color_type in (0, 2) and rng.random() < 0.4:  # a transparent color
            key = samples[rng.integers(0, h), rng.integers(0, w)]
            trns = b"".join(struct.pack(">H", int(v)) for v in key)
    return write_png(samples, color_type, bits, palette, trns, interlace)


def both_decode(op, data, **attrs):
    """(tfc result, TensorFlow result) as numpy, or raises when either fails."""
    got = getattr(tfc.raw_ops, op)(contents=tfc.constant(data), **attrs).numpy()
    want = getattr(tf.raw_ops, op)(contents=tf.constant(data), **{
        k: (tf.as_dtype(v) if k == "dtype" else v) for k, v in attrs.items()}).numpy()
    return got, want


# ---- PNG -----------------------------------------------------------------------------------------------

def test_decode_png_tf_written(rng):
    require_ops("DecodePng", "EncodePng")
    for _ in range(12):
        dt = rng.choice(["uint8", "uint16"])
        img = random_array(rng, (rng.integers(1, 30), rng.integers(1, 30), rng.integers(1, 5)), dt, 0,
                           256 if dt == "uint8" else 65536)
        png = tf.io.encode_png(img).numpy()
        for ch in (0, 1, 3, 4):
            for out in ("uint8", "uint16"):
                got, want = both_decode("DecodePng", png, channels=ch, dtype=out)
                assert got.dtype == want.dtype and got.shape == want.shape
                np.testing.assert_array_equal(got, want, err_msg="channels=%d dtype=%s" % (ch, out))


def test_decode_png_all_kinds(rng):
    """Palettes, tRNS, 1/2/4-bit gray, gray+alpha, 16-bit, interlaced: every conversion matches."""
    require_ops("DecodePng", "DecodeImage")
    for _ in range(40):
        png = random_png(rng)
        for ch in (0, 1, 3, 4):
            for op, out in (("DecodePng", "uint8"), ("DecodePng", "uint16"), ("DecodeImage", "float32")):
                got, want = both_decode(op, png, channels=ch, dtype=out)
                assert got.dtype == want.dtype and got.shape == want.shape, (op, ch, out)
                np.testing.assert_array_equal(got, want, err_msg="%s channels=%d dtype=%s" % (op, ch, out))


def test_encode_png_round_trip(rng):
    """tfc-written PNGs decode in TensorFlow to the original pixels; batches give one string per image."""
    require_ops("EncodePng")
    for _ in range(8):
        dt = rng.choice(["uint8", "uint16"])
        shape = tuple(int(d) for d in rng.integers(1, 4, size=int(rng.integers(0, 3)))) + \
            (int(rng.integers(1, 20)), int(rng.integers(1, 20)), int(rng.integers(1, 5)))
        img = random_array(rng, shape, dt, 0, 256 if dt == "uint8" else 65536)
        comp = int(rng.integers(-1, 10))
        enc = np.array(tfc.raw_ops.EncodePng(image=tfc.constant(img), compression=comp).numpy(), dtype=object)
        assert enc.shape == shape[:-3]
        flat_enc, flat_img = np.asarray(enc).reshape(-1), img.reshape((-1,) + shape[-3:])
        for e, i in zip(flat_enc, flat_img):
            dec = tf.io.decode_png(e, dtype=tf.as_dtype(dt)).numpy()
            np.testing.assert_array_equal(dec, i)


# ---- JPEG ----------------------------------------------------------------------------------------------

def test_encode_jpeg(rng):
    """tfc's JPEG bytes equal TensorFlow's for random images and settings (same libjpeg-turbo defaults), or at
    least decode to the same pixels."""
    require_ops("EncodeJpeg")
    for _ in range(10):
        c = int(rng.choice([1, 3]))
        img = random_array(rng, (int(rng.integers(1, 40)), int(rng.integers(1, 40)), c), "uint8", 0, 256)
        attrs = dict(quality=int(rng.integers(0, 101)), progressive=bool(rng.random() < 0.3),
                     optimize_size=bool(rng.random() < 0.3), chroma_downsampling=bool(rng.random() < 0.7),
                     density_unit=str(rng.choice(["in", "cm"])), x_density=int(rng.integers(1, 600)),
                     y_density=int(rng.integers(1, 600)), format=str(rng.choice(["", "grayscale" if c == 1 else "rgb"])),
                     xmp_metadata=str(rng.choice(["", "<x:xmpmeta/>"])))
        got = tfc.raw_ops.EncodeJpeg(image=img, **attrs).numpy()
        want = tf.raw_ops.EncodeJpeg(image=img, **attrs).numpy()
        if got != want:
            np.testing.assert_array_equal(tf.io.decode_jpeg(got).numpy(), tf.io.decode_jpeg(want).numpy())
    for img, attrs in [(np.zeros((4, 5, 2), np.uint8), {}), (np.zeros((4, 5), np.uint8), {}),
                       (np.zeros((4, 5, 3), np.uint8), {"format": "grayscale"}),
                       (np.zeros((4, 5, 3), np.uint8), {"quality": 101}), (np.zeros((0, 5, 3), np.uint8), {})]:
        assert_both_raise("EncodeJpeg", {"image": img}, attrs)


def random_jpeg(rng):
    h, w = int(rng.integers(1, 48)), int(rng.integers(1, 48))
    c = int(rng.choice([1, 3]))
    img = random_array(rng, (h, w, c), "uint8", 0, 256)
    if rng.random() < 0.5:  # smoother content, like photographs
        img = np.clip(np.cumsum(img.astype(np.int64) - 127, axis=1) // max(w, 1) + 128, 0, 255).astype(np.uint8)
    return tf.io.encode_jpeg(img, quality=int(rng.integers(10, 101)), progressive=bool(rng.random() < 0.3),
                             chroma_downsampling=bool(rng.random() < 0.7)).numpy()


def test_decode_jpeg(rng):
    require_ops("DecodeJpeg", "DecodeImage", "DecodePng")
    for _ in range(15):
        jpg = random_jpeg(rng)
        for ch in (0, 1, 3):
            attrs = dict(channels=ch, ratio=int(rng.choice([1, 2, 4, 8])), fancy_upscaling=bool(rng.random() < 0.7),
                         dct_method=str(rng.choice(["", "INTEGER_FAST", "INTEGER_ACCURATE"])))
            got, want = both_decode("DecodeJpeg", jpg, **attrs)
            assert got.shape == want.shape, attrs
            np.testing.assert_array_equal(got, want, err_msg=str(attrs))
            for op, out in (("DecodeImage", "float32"), ("DecodePng", "uint16")):
                got, want = both_decode(op, jpg, channels=ch, dtype=out)
                np.testing.assert_array_equal(got, want, err_msg="%s %s" % (op, out))


def _robust(op, data, with_tf=True, **attrs):
    """Corrupt or truncated data: tfc either decodes it (to TensorFlow's shape when TensorFlow decodes it
    too) or raises InvalidArgumentError naming the op; never crashes. The pixels libjpeg produces past the
    point of damage depend on the libjpeg-turbo release (TensorFlow bundles its own), so they are not
    compared. with_tf=False: tfc alone (TensorFlow's JPEG source loops forever on some truncated progressive
    files when asked to recover)."""
    want = None
    try:
        if with_tf:
            want = getattr(tf.raw_ops, op)(contents=tf.constant(data), **attrs).numpy()
    except tf.errors.InvalidArgumentError:
        pass
    try:
        got = getattr(tfc.raw_ops, op)(contents=tfc.constant(data), **attrs).numpy()
    except tfc.InvalidArgumentError as e:
        assert op in str(e)
        return
    if want is not None:
        assert got.shape == want.shape, attrs


def test_decode_jpeg_truncated(rng):
    require_ops("DecodeJpeg")
    for _ in range(10):
        jpg = random_jpeg(rng)
        cut = jpg[:int(rng.integers(len(jpg) // 2, len(jpg)))]
        assert_both_raise("DecodeJpeg", {"contents": cut})
        for frac in (0.0, 0.5, 1.0):
            _robust("DecodeJpeg", cut, with_tf=False, try_recover_truncated=True, acceptable_fraction=frac)
        for n in rng.integers(1, len(jpg), size=4):  # corrupt bytes
            bad = bytearray(jpg)
            bad[int(n)] ^= 0xFF
            _robust("DecodeJpeg", bytes(bad))
            _robust("DecodeImage", bytes(bad))


def test_decode_png_corrupt(rng):
    require_ops("DecodePng")
    for _ in range(20):
        png = random_png(rng)
        bad = bytearray(png)
        for n in rng.integers(8, len(png), size=int(rng.integers(1, 4))):
            bad[int(n)] = int(rng.integers(0, 256))
        _robust("DecodePng", bytes(bad))
        _robust("DecodePng", png[:int(rng.integers(8, len(png)))])


def write_bmp(rng, h, w, bpp, top_down):
    """An uncompressed BMP (BITMAPINFOHEADER) with random pixels; rows padded to 4 bytes."""
    c = bpp // 8
    row = (c * w + 3) // 4 * 4
    pix = bytearray()
    for _ in range(h):
        pix += bytes(rng.integers(0, 256, size=c * w).astype(np.uint8)) + b"\0" * (row - c * w)
    header = 14 + 40
    info = struct.pack("<IiiHHIIiiII", 40, w, -h if top_down else h, 1, bpp, 0, len(pix), 2835, 2835, 0, 0)
    return b"BM" + struct.pack("<IHHI", header + len(pix), 0, 0, header) + info + bytes(pix)


def test_decode_bmp(rng):
    require_ops("DecodeImage")
    for _ in range(12):
        top_down = bool(rng.random() < 0.5)
        bmp = write_bmp(rng, int(rng.integers(1, 20)), int(rng.integers(1, 20)), int(rng.choice([8, 24, 32])), top_down)
        for ch in (0, 3, 4):
            got8, want8 = both_decode("DecodeImage", bmp, channels=ch, dtype="uint8", expand_animations=False)
            np.testing.assert_array_equal(got8, want8, err_msg="channels=%d" % ch)
            for out, scale in (("uint16", 256), ("float32", np.float32(1.0 / 255))):
                if top_down:  # TensorFlow's BMP reader crashes on top-down files for these dtypes: tfc alone
                    got = tfc.raw_ops.DecodeImage(contents=bmp, channels=ch, dtype=out).numpy()
                    np.testing.assert_array_equal(got, (got8.astype(out) * scale).astype(out))
                    continue
                got, want = both_decode("DecodeImage", bmp, channels=ch, dtype=out, expand_animations=False)
                np.testing.assert_array_equal(got, want, err_msg="channels=%d dtype=%s" % (ch, out))
        assert_both_raise("DecodeImage", {"contents": bmp}, {"channels": 1})
        assert_both_raise("DecodeImage", {"contents": bmp[:-1]})
        assert_both_raise("DecodePng", {"contents": bmp})


def test_decode_errors():
    require_ops("DecodePng", "DecodeJpeg", "DecodeImage")
    img = np.zeros((3, 4, 3), np.uint8)
    png = tf.io.encode_png(img).numpy()
    for op in ("DecodePng", "DecodeJpeg", "DecodeImage"):
        for data in (b"", b"hello world", png[:40], png[:-20], b"\xff\xd8\xff\xe0" + b"\0" * 40):
            assert_both_raise(op, {"contents": data})
        assert_both_raise(op, {"contents": [png]})
        assert_both_raise(op, {"contents": png}, {"channels": 2})
    with pytest.raises(tfc.InvalidArgumentError, match="DecodePng"):
        tfc.raw_ops.DecodePng(contents=b"\x89PNG\r\n\x1a\n" + b"\0" * 30)


# ---- resizing ------------------------------------------------------------------------------------------

def _resize_cases(rng, n):
    for _ in range(n):
        b, h, w, c = int(rng.integers(0, 3)), int(rng.integers(1, 13)), int(rng.integers(1, 13)), int(rng.integers(1, 5))
        oh, ow = int(rng.integers(1, 17)), int(rng.integers(1, 17))
        half = bool(rng.random() < 0.5)
        align = (not half) and bool(rng.random() < 0.4)
        yield (b, h, w, c), (oh, ow), dict(align_corners=align, half_pixel_centers=half)


@pytest.mark.parametrize("dtype", RESIZE_DTYPES)
def test_resize_bilinear(rng, dtype):
    require_ops("ResizeBilinear")
    for shape, size, attrs in _resize_cases(rng, 12):
        lo, hi = (0, 256) if dtype in ("uint8", "uint16") else (-100, 100) if "int" in dtype else (-3, 3)
        x = random_array(rng, shape, dtype, lo, hi)
        assert_op_matches("ResizeBilinear", {"images": x, "size": np.array(size, np.int32)}, attrs)


@pytest.mark.parametrize("dtype", RESIZE_DTYPES)
def test_resize_nearest(rng, dtype):
    require_ops("ResizeNearestNeighbor")
    for shape, size, attrs in _resize_cases(rng, 12):
        x = random_array(rng, shape, dtype, 0, 100)
        assert_op_matches("ResizeNearestNeighbor", {"images": x, "size": np.array(size, np.int32)}, attrs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_resize_gradients(rng, dtype):
    require_ops("ResizeBilinear", "ResizeNearestNeighbor", "ResizeBilinearGrad", "ResizeNearestNeighborGrad")
    for shape, size, attrs in _resize_cases(rng, 8):
        x = random_array(rng, shape, dtype)
        for op in ("ResizeBilinear", "ResizeNearestNeighbor"):
            assert_grad_matches(op, {"images": x, "size": np.array(size, np.int32)}, attrs, wrt=["images"], rng=rng,
                                rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_resize_grad_ops(rng, dtype):
    require_ops("ResizeBilinearGrad", "ResizeNearestNeighborGrad")
    for shape, size, attrs in _resize_cases(rng, 8):
        img = random_array(rng, shape, dtype)
        g = random_array(rng, (shape[0],) + size + (shape[3],), "float32")
        tol = dict(rtol=1e-4, atol=1e-4) if dtype in ("float32", "float64") else {}
        assert_op_matches("ResizeBilinearGrad", {"grads": g, "original_image": img}, attrs, **tol)
        gn = random_array(rng, (shape[0],) + size + (shape[3],), dtype)
        assert_op_matches("ResizeNearestNeighborGrad", {"grads": gn, "size": np.array(shape[1:3], np.int32)}, attrs,
                          **tol)
    gi = random_array(rng, (1, 3, 4, 2), "int32", -50, 50)
    assert_op_matches("ResizeNearestNeighborGrad", {"grads": gi, "size": np.array([2, 5], np.int32)})


def test_resize_errors(rng):
    require_ops("ResizeBilinear", "ResizeNearestNeighbor")
    x = random_array(rng, (1, 4, 4, 3))
    for op in ("ResizeBilinear", "ResizeNearestNeighbor"):
        for size in ([2], [2, 2, 2], [0, 2], [-1, 3]):
            assert_both_raise(op, {"images": x, "size": np.array(size, np.int32)})
        assert_both_raise(op, {"images": x[0], "size": np.array([2, 2], np.int32)})
        assert_both_raise(op, {"images": x, "size": np.array([2, 2], np.int32)},
                          {"align_corners": True, "half_pixel_centers": True})
        assert_both_raise(op, {"images": np.zeros((1, 0, 3, 1), np.float32), "size": np.array([2, 2], np.int32)})
    assert_both_raise("ResizeBilinearGrad", {"grads": x[0], "original_image": x})
    assert_both_raise("ResizeNearestNeighborGrad", {"grads": x, "size": np.array([0, 2], np.int32)})


def test_image_resize_pipeline(rng):
    """decode -> resize as tf.image.resize does (half-pixel centres), the path of an input pipeline."""
    require_ops("DecodePng", "ResizeBilinear")
    img = random_array(rng, (int(rng.integers(5, 40)), int(rng.integers(5, 40)), 3), "uint8", 0, 256)
    png = tf.io.encode_png(img).numpy()
    size = [int(rng.integers(1, 50)), int(rng.integers(1, 50))]
    dec = tfc.raw_ops.DecodePng(contents=png, channels=3)
    got = tfc.raw_ops.ResizeBilinear(images=tfc.raw_ops.ExpandDims(input=dec, dim=0), size=np.array(size, np.int32),
                                     half_pixel_centers=True).numpy()[0]
    want = tf.image.resize(tf.io.decode_png(png, channels=3), size).numpy()
    assert_close(got, want)
