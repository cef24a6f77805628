"""What this toolproof installation ships and where it came from: the shipped files' root
(``shipped.py``), how toolproof was installed (``origin.py``), the pi adapter and the pi releases
and Node runtime it installs (``pi.py``). The lowest layer of the harness besides ``model/`` and
``errors.py``: every other package may use it, it uses none of them."""
