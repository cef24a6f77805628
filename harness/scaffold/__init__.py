"""``toolproof init``: what it writes into a user's repository (``project.py``, from the templates
in ``templates/``)."""
