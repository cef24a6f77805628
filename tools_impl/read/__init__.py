"""The ``read`` tool: the wrapper pipeline, the engine read, the device guards, images/notebooks/PDFs."""
