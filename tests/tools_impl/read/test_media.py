"""Image, notebook and PDF reads (spec read.7, spec read.2 step 5): magic-byte detection, resizing and the
``read.image-fallback`` patch, the notebook rendering and the PDF ``pages`` parameter."""

from __future__ import annotations

import base64
import io
import json
import os
import struct
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

from tools_impl.core.context import make_context
from tools_impl.core.errors import ToolError
from tools_impl.core.profile import PATCH_READ_IMAGE_FALLBACK, REFERENCE, UPSTREAM_PI, Profile
from tools_impl.core.result import ToolResult
from tools_impl.read import tool as read
from tools_impl.read.media import (
    ImageLimits,
    ImageProcessorUnavailableError,
    detect_image_mime,
    header_dimensions,
    image_read_result,
    parse_pages,
    resize_image,
)

OMITTED = "[Image omitted: could not be resized below the inline image size limit.]"


def run(root: Path, args: dict[str, Any], profile: Profile = REFERENCE) -> ToolResult:
    return read.execute(args, make_context(str(root), profile=profile))


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_bytes(w: int, h: int, before_idat: tuple[tuple[bytes, bytes], ...] = (), idat: bytes | None = None) -> bytes:
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    raw = b"".join(b"\x00" + b"\xff\x00\x00" * w for _ in range(h))
    body = zlib.compress(raw) if idat is None else idat
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + b"".join(chunk(k, d) for k, d in before_idat)
            + chunk(b"IDAT", body) + chunk(b"IEND", b""))


def pil_image_bytes(fmt: str, size: tuple[int, int], color: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    image_mod = pytest.importorskip("PIL.Image", reason="Pillow (toolproof[images]) is not installed")
    buf = io.BytesIO()
    image_mod.new("RGB", size, color).save(buf, format=fmt)
    return buf.getvalue()


def no_pillow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "PIL", None)
    monkeypatch.setitem(sys.modules, "PIL.Image", None)


# --- detection ------------------------------------------------------------------------------
def test_magic_byte_detection_table() -> None:
    assert detect_image_mime(b"\xff\xd8\xff\xe0rest") == "image/jpeg"
    assert detect_image_mime(b"\xff\xd8\xff") == "image/jpeg"
    assert detect_image_mime(b"\xff\xd8\xff\xf7rest") is None
    assert detect_image_mime(png_bytes(1, 1)) == "image/png"
    assert detect_image_mime(b"GIF87a") == "image/gif"
    assert detect_image_mime(b"GIF") == "image/gif"
    assert detect_image_mime(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == "image/webp"
    assert detect_image_mime(b"RIFF\x00\x00\x00\x00WAVEfmt ") is None
    assert detect_image_mime(b"BM\x00\x00") is None


def test_png_needs_sixteen_bytes_and_a_13_byte_ihdr() -> None:
    png = png_bytes(1, 1)
    assert detect_image_mime(png[:15]) is None
    assert detect_image_mime(png[:16]) == "image/png"
    bad = png[:8] + struct.pack(">I", 14) + png[12:]
    assert detect_image_mime(bad) is None


def test_apng_is_rejected_when_actl_precedes_idat() -> None:
    apng = png_bytes(1, 1, ((b"acTL", struct.pack(">II", 1, 0)),))
    assert detect_image_mime(apng) is None
    after = png_bytes(1, 1)[:-12] + chunk(b"acTL", b"\x00" * 8) + chunk(b"IEND", b"")
    assert detect_image_mime(after) == "image/png"


def test_apng_is_read_as_text_by_the_engine(tmp_path: Path) -> None:
    (tmp_path / "anim.png").write_bytes(png_bytes(1, 1, ((b"acTL", struct.pack(">II", 1, 0)),)))
    res = run(tmp_path, {"path": "anim.png"}, UPSTREAM_PI)
    assert len(res.content) == 1 and res.text.startswith("\ufffdPNG\r\n\x1a\n")


def test_apng_through_the_wrapper_is_caught_by_the_nul_sniff(tmp_path: Path) -> None:
    (tmp_path / "anim.png").write_bytes(png_bytes(1, 1, ((b"acTL", struct.pack(">II", 1, 0)),)))
    assert run(tmp_path, {"path": "anim.png"}).text.startswith("File appears to be binary (NUL bytes detected).")


def test_header_dimensions_for_each_format() -> None:
    assert header_dimensions(png_bytes(7, 3), "image/png") == (7, 3)
    assert header_dimensions(b"GIF89a\x05\x01\x02\x00", "image/gif") == (261, 2)
    assert header_dimensions(pil_image_bytes("JPEG", (33, 17)), "image/jpeg") == (33, 17)
    vp8l = b"RIFF\x00\x00\x00\x00WEBPVP8L\x00\x00\x00\x00\x2f" + bytes([0x09, 0x40, 0x04, 0x00])
    assert header_dimensions(vp8l, "image/webp") == (10, 18)
    vp8x = b"RIFF\x00\x00\x00\x00WEBPVP8X" + b"\x0a\x00\x00\x00" + b"\x00" * 4 + b"\x1f\x00\x00" + b"\x0f\x00\x00"
    assert header_dimensions(vp8x, "image/webp") == (32, 16)
    assert header_dimensions(pil_image_bytes("WEBP", (12, 9)), "image/webp") == (12, 9)


# --- image results --------------------------------------------------------------------------
def test_small_png_is_returned_unchanged_as_text_and_image_blocks(tmp_path: Path) -> None:
    data = png_bytes(2, 3)
    (tmp_path / "tiny.png").write_bytes(data)
    res = run(tmp_path, {"path": "tiny.png", "offset": 5, "limit": 1})
    assert res.to_json() == {
        "content": [{"type": "text", "text": "Read image file [image/png]"},
                    {"type": "image", "data": base64.b64encode(data).decode(), "mimeType": "image/png"}],
        "details": None, "is_error": False}


@pytest.mark.parametrize("fmt,mime", [("GIF", "image/gif"), ("JPEG", "image/jpeg")])
def test_small_gif_and_jpeg_are_returned_unchanged(tmp_path: Path, fmt: str, mime: str) -> None:
    data = pil_image_bytes(fmt, (4, 4))
    (tmp_path / "pic.bin.img").write_bytes(data)
    res = run(tmp_path, {"path": "pic.bin.img"})
    assert res.to_json()["content"] == [{"type": "text", "text": f"Read image file [{mime}]"},
                                        {"type": "image", "data": base64.b64encode(data).decode(), "mimeType": mime}]


def test_image_magic_in_a_bmp_named_file_is_read_as_an_image(tmp_path: Path) -> None:
    (tmp_path / "really.bmp").write_bytes(png_bytes(1, 1))
    assert run(tmp_path, {"path": "really.bmp"}).text == "Read image file [image/png]"


def test_oversized_image_is_resized_with_a_dimension_note(tmp_path: Path) -> None:
    image_mod = pytest.importorskip("PIL.Image", reason="Pillow (toolproof[images]) is not installed")
    (tmp_path / "wide.png").write_bytes(pil_image_bytes("PNG", (3000, 1000)))
    res = run(tmp_path, {"path": "wide.png"})
    assert res.text == ("Read image file [image/png]\n[Image: original 3000x1000, displayed at 2000x667. "
                        "Multiply coordinates by 1.50 to map to original image.]")
    block = res.to_json()["content"][1]
    assert image_mod.open(io.BytesIO(base64.b64decode(block["data"]))).size == (2000, 667)
    assert res.details is None


def test_payload_limit_triggers_jpeg_and_the_downscale_loop() -> None:
    image_mod = pytest.importorskip("PIL.Image", reason="Pillow (toolproof[images]) is not installed")
    buf = io.BytesIO()
    image_mod.frombytes("RGB", (200, 200), os.urandom(200 * 200 * 3)).save(buf, format="PNG")
    limits = ImageLimits(max_base64_bytes=6000)
    out = resize_image(buf.getvalue(), "image/png", limits)
    assert out is not None and out.was_resized and len(out.data) < 6000
    assert out.mime_type == "image/jpeg"
    assert (out.width, out.height) in {(200, 200), (150, 150), (112, 112), (84, 84), (63, 63), (47, 47), (35, 35)}


def test_image_that_cannot_be_made_small_enough_is_omitted() -> None:
    pytest.importorskip("PIL.Image", reason="Pillow (toolproof[images]) is not installed")
    res = image_read_result(png_bytes(4, 4), "image/png", limits=ImageLimits(max_base64_bytes=10))
    assert res.to_json() == {"content": [{"type": "text", "text": f"Read image file [image/png]\n{OMITTED}"}],
                             "details": None, "is_error": False}


def test_undecodable_image_is_omitted_and_the_wrapper_numbers_the_text_only_result(tmp_path: Path) -> None:
    pytest.importorskip("PIL.Image", reason="Pillow (toolproof[images]) is not installed")
    (tmp_path / "broken.png").write_bytes(png_bytes(3000, 3000, idat=b"garbage"))
    assert run(tmp_path, {"path": "broken.png"}, UPSTREAM_PI).text == f"Read image file [image/png]\n{OMITTED}"
    assert run(tmp_path, {"path": "broken.png"}).text == (
        f"     1→Read image file [image/png]\n     2→{OMITTED}")


def test_without_pillow_the_fallback_returns_an_image_within_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    no_pillow(monkeypatch)
    data = png_bytes(2000, 1, idat=b"not decoded")
    (tmp_path / "ok.png").write_bytes(data)
    res = run(tmp_path, {"path": "ok.png"})
    assert res.to_json()["content"] == [{"type": "text", "text": "Read image file [image/png]"},
                                        {"type": "image", "data": base64.b64encode(data).decode(),
                                         "mimeType": "image/png"}]


def test_without_pillow_the_fallback_raises_a_typed_error_for_oversized_images(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    no_pillow(monkeypatch)
    (tmp_path / "big.png").write_bytes(png_bytes(2001, 1, idat=b"x"))
    with pytest.raises(ImageProcessorUnavailableError) as exc:
        run(tmp_path, {"path": "big.png"})
    assert "Pillow" in str(exc.value) and "2001x1" in str(exc.value)
    assert exc.value.code == "ImageProcessorUnavailableError"


def test_without_pillow_and_without_the_patch_the_image_is_omitted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    no_pillow(monkeypatch)
    (tmp_path / "a.png").write_bytes(png_bytes(1, 1))
    profile = UPSTREAM_PI.with_patches({PATCH_READ_IMAGE_FALLBACK: False})
    assert run(tmp_path, {"path": "a.png"}, profile).text == f"Read image file [image/png]\n{OMITTED}"


# --- notebooks ------------------------------------------------------------------------------
def test_notebook_renders_cells_outputs_and_image_blocks(tmp_path: Path) -> None:
    png = base64.b64encode(png_bytes(1, 1)).decode()
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "markdown", "id": "m1", "metadata": {}, "source": ["# Title\n", "text"]},
        {"cell_type": "code", "id": "c1", "execution_count": 2, "metadata": {}, "source": "print('hi')\n1+1",
         "outputs": [
             {"output_type": "stream", "name": "stdout", "text": ["hi\n"]},
             {"output_type": "execute_result", "execution_count": 2, "metadata": {},
              "data": {"text/plain": ["2"], "text/html": ["<b>2</b>"]}},
             {"output_type": "display_data", "metadata": {}, "data": {"image/png": png, "text/plain": "<Figure>"}},
             {"output_type": "error", "ename": "ValueError", "evalue": "bad",
              "traceback": ["\x1b[0;31mValueError\x1b[0m: bad"]},
         ]},
        {"cell_type": "code", "metadata": {}, "source": "", "execution_count": None, "outputs": []},
    ]}
    (tmp_path / "n.ipynb").write_text(json.dumps(nb))
    res = run(tmp_path, {"path": "n.ipynb"})
    assert res.to_json() == {
        "content": [
            {"type": "text", "text": (
                '<cell id="m1" type="markdown">\n# Title\ntext\n</cell>\n'
                '<cell id="c1" type="code" execution_count="2">\nprint(\'hi\')\n1+1\n</cell>\n'
                '<output cell="c1" type="stream" name="stdout">\nhi\n</output>\n'
                '<output cell="c1" type="execute_result">\n2\n</output>\n'
                '<output cell="c1" type="display_data" mime="image/png"/>')},
            {"type": "image", "data": png, "mimeType": "image/png"},
            {"type": "text", "text": (
                '<output cell="c1" type="error">\nValueError: bad\nValueError: bad\n</output>\n'
                '<cell id="cell-2" type="code">\n\n</cell>')},
        ],
        "details": {"media": {"kind": "notebook", "cells": 3, "images": 1}},
        "is_error": False}


def test_invalid_notebook_json_raises(tmp_path: Path) -> None:
    (tmp_path / "bad.ipynb").write_text("{not json")
    with pytest.raises(ToolError) as exc:
        run(tmp_path, {"path": "bad.ipynb"})
    assert str(exc.value).startswith(f"Cannot read notebook '{tmp_path / 'bad.ipynb'}': invalid JSON")


def test_missing_notebook_raises_the_node_open_error(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as exc:
        run(tmp_path, {"path": "gone.ipynb"})
    assert str(exc.value) == f"ENOENT: no such file or directory, open '{tmp_path / 'gone.ipynb'}'"


# --- PDFs -----------------------------------------------------------------------------------
def make_pdf(texts: list[str]) -> bytes:
    """A minimal valid PDF with one Helvetica text line per page (correct xref offsets)."""
    n = len(texts)
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(n))
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>",
            f"<< /Type /Pages /Kids [{kids}] /Count {n} >>".encode(),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    for i, text in enumerate(texts):
        stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
        objs.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
                    f"/Contents {5 + 2 * i} 0 R >>".encode())
        objs.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = b"%PDF-1.4\n"
    offsets = []
    for i, obj in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return out


@pytest.fixture
def pdf3(tmp_path: Path) -> Path:
    pytest.importorskip("pypdf", reason="pypdf (toolproof[pdf]) is not installed")
    (tmp_path / "doc.pdf").write_bytes(make_pdf(["Page one", "Page two", "Page three"]))
    return tmp_path


def test_pdf_single_page(pdf3: Path) -> None:
    res = run(pdf3, {"path": "doc.pdf", "pages": "2"})
    assert res.to_json() == {"content": [{"type": "text", "text": '<page number="2">\nPage two\n</page>'}],
                             "details": {"media": {"kind": "pdf", "pages": [2, 2], "total_pages": 3}},
                             "is_error": False}


def test_pdf_range_and_whole_document(pdf3: Path) -> None:
    expected = ('<page number="1">\nPage one\n</page>\n<page number="2">\nPage two\n</page>\n'
                '<page number="3">\nPage three\n</page>')
    assert run(pdf3, {"path": "doc.pdf", "pages": "1-3"}).text == expected
    assert run(pdf3, {"path": "doc.pdf"}).text == expected
    assert run(pdf3, {"path": "doc.pdf", "pages": "2-9"}).text.startswith('<page number="2">')


def test_pdf_page_past_the_end_raises(pdf3: Path) -> None:
    with pytest.raises(ToolError) as exc:
        run(pdf3, {"path": "doc.pdf", "pages": "4"})
    assert str(exc.value) == "Page 4 is beyond the end of this PDF (3 pages)."


def test_pdf_longer_than_20_pages_needs_the_pages_parameter(tmp_path: Path) -> None:
    pytest.importorskip("pypdf", reason="pypdf (toolproof[pdf]) is not installed")
    (tmp_path / "long.pdf").write_bytes(make_pdf([f"P{i}" for i in range(1, 26)]))
    with pytest.raises(ToolError) as exc:
        run(tmp_path, {"path": "long.pdf"})
    assert str(exc.value) == ('This PDF has 25 pages; at most 20 pages can be read per call. '
                              'Use the pages parameter, e.g. pages="1-20".')
    assert run(tmp_path, {"path": "long.pdf", "pages": "21-25"}).text.endswith('<page number="25">\nP25\n</page>')


def test_pages_parameter_parsing() -> None:
    assert parse_pages("3") == (3, 3)
    assert parse_pages(" 1 - 5 ") == (1, 5)
    assert parse_pages("1-20") == (1, 20)
    with pytest.raises(ToolError) as exc:
        parse_pages("1-21")
    assert str(exc.value) == 'Page range "1-21" spans 21 pages; at most 20 pages can be read per call.'
    for bad in ("", "a", "1,2", "0", "5-2", "-3"):
        with pytest.raises(ToolError):
            parse_pages(bad)


def test_missing_pypdf_names_the_optional_dependency(pdf3: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pypdf", None)
    with pytest.raises(ToolError) as exc:
        run(pdf3, {"path": "doc.pdf"})
    assert "pip install 'toolproof[pdf]'" in str(exc.value) and "pypdf" in str(exc.value)


def test_pdf_in_upstream_mode_is_decoded_as_text(pdf3: Path) -> None:
    assert run(pdf3, {"path": "doc.pdf"}, UPSTREAM_PI).text.startswith("%PDF-1.4\n1 0 obj")


def test_missing_pdf_raises_the_node_open_error(tmp_path: Path) -> None:
    pytest.importorskip("pypdf", reason="pypdf (toolproof[pdf]) is not installed")
    with pytest.raises(ToolError) as exc:
        run(tmp_path, {"path": "gone.pdf"})
    assert str(exc.value) == f"ENOENT: no such file or directory, open '{tmp_path / 'gone.pdf'}'"


def test_corrupt_pdf_raises_a_clear_error(tmp_path: Path) -> None:
    pytest.importorskip("pypdf", reason="pypdf (toolproof[pdf]) is not installed")
    (tmp_path / "junk.pdf").write_text("this is not a pdf")
    with pytest.raises(ToolError) as exc:
        run(tmp_path, {"path": "junk.pdf"})
    assert str(exc.value).startswith(f"Cannot read PDF '{tmp_path / 'junk.pdf'}': ")
