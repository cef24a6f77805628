"""Machinery several tools share: output truncation, the line diff, path resolution, the file mutation queue."""
