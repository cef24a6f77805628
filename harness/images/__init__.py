"""Container images: the recipes and their hashes and tags (``recipes.py``), the docker engine
client (``engine.py``), the offline builder (``build.py``), the per-implementation runtime images
(``runtime.py``) and a user's adapter image (``adapter.py``). Below ``backends/``: the docker
backend uses these images, they know nothing of backends."""
