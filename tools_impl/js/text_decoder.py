"""Node's ``new TextDecoder()`` (UTF-8, not fatal, BOM not ignored) as a streaming decoder.

``decode(data, stream=True)`` is ``decoder.decode(data, {stream: true})``: an incomplete sequence
at the end of ``data`` waits for the next call. ``decode(b"", stream=False)`` is ``decoder.decode()``:
it ends the stream, so what is still waiting becomes one U+FFFD, and the decoder starts afresh.
Invalid bytes become U+FFFD per maximal subpart, as the WHATWG decoder does (Python's UTF-8
decoder follows the same Unicode practice). One U+FEFF at the very start of a stream is dropped.

Python's ``utf-8-sig`` incremental decoder is not a substitute: a stream that ends while its
first bytes could still be a BOM (``EF`` or ``EF BB``) decodes to nothing there, where Node gives
U+FFFD.
"""

from __future__ import annotations

import codecs

from tools_impl.js.text import BOM_CHAR


class TextDecoder:
    """One stream's UTF-8 decoder with Node's end-of-stream and BOM behaviour."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._bom_seen = False

    def decode(self, data: bytes = b"", stream: bool = True) -> str:
        text = self._decoder.decode(data, not stream)
        if text and not self._bom_seen:
            self._bom_seen = True  # the first character decides, whatever it is
            if text.startswith(BOM_CHAR):
                text = text[1:]
        if not stream:
            self._decoder.reset()
            self._bom_seen = False
        return text

